package telegramtest

import (
	"bytes"
	"errors"
	"image"
	_ "image/gif" // sendPhoto accepts GIF, JPEG and PNG
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Telegram's limits on what a bot uploads.
const (
	// MaxUpload is the largest file a bot may upload.
	MaxUpload = 50 << 20
	// MaxPhoto is the largest photo sendPhoto takes.
	MaxPhoto = 10 << 20
	// MaxCaption is the longest caption, in UTF-16 code units after
	// entity parsing.
	MaxCaption = 1024
)

// Upload is a file a request carried as a multipart/form-data part.
type Upload struct {
	// Field is the form field (photo, voice, audio, document).
	Field string
	// Name is the file name of the part's Content-Disposition.
	Name string
	// ContentType is the part's Content-Type.
	ContentType string
	Data        []byte
}

// parseRequest parses a form-encoded or multipart/form-data request into
// r.Form and returns the multipart request's files by field. A body over
// Telegram's upload limit is 413 Request Entity Too Large.
func parseRequest(w http.ResponseWriter, r *http.Request) (map[string]Upload, *apiError) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if err := r.ParseForm(); err != nil {
			return nil, badRequest("can't parse request")
		}
		return nil, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload+1<<20)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) || strings.Contains(err.Error(), "request body too large") {
			return nil, &apiError{code: 413, description: "Request Entity Too Large"}
		}
		return nil, badRequest("can't parse request")
	}
	defer r.MultipartForm.RemoveAll()
	files := map[string]Upload{}
	for field, hs := range r.MultipartForm.File {
		for _, h := range hs {
			if h.Size > MaxUpload {
				return nil, &apiError{code: 413, description: "Request Entity Too Large"}
			}
			f, err := h.Open()
			if err != nil {
				return nil, badRequest("can't parse request")
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return nil, badRequest("can't parse request")
			}
			files[field] = Upload{Field: field, Name: h.Filename, ContentType: h.Header.Get("Content-Type"), Data: data}
		}
	}
	return files, nil
}

// fileFields are the form field of each method that sends a file.
var fileFields = map[string]string{
	"sendPhoto": "photo", "sendVoice": "voice", "sendAudio": "audio", "sendDocument": "document",
}

// sendFile answers sendPhoto, sendVoice, sendAudio and sendDocument: the
// file uploaded (or the file_id of one the server keeps), checked as
// Telegram checks it, becomes a message of the chat with its caption.
func (s *Server) sendFile(method string, p url.Values, files map[string]Upload) (any, *apiError) {
	field := fileFields[method]
	chatID, err := parseInt(p.Get("chat_id"))
	if err != nil {
		return nil, badRequest("chat not found")
	}
	if s.strangers[chatID] {
		return nil, &apiError{code: 403, description: "Forbidden: bot can't initiate conversation with a user"}
	}
	up, ok := files[field]
	if !ok {
		ref := p.Get(field)
		if ref == "" {
			return nil, badRequest("there is no " + field + " in the request")
		}
		f := s.files[ref]
		if f == nil {
			return nil, badRequest("wrong file identifier/HTTP URL specified")
		}
		up = Upload{Field: field, Data: f.data}
	}
	if len(up.Data) == 0 {
		return nil, badRequest("file must be non-empty")
	}
	caption, ents, apiErr := captionOf(p)
	if apiErr != nil {
		return nil, apiErr
	}
	kind := field
	switch method {
	case "sendPhoto":
		if apiErr := checkPhoto(up.Data); apiErr != nil {
			return nil, apiErr
		}
	case "sendVoice":
		// A voice message must be OGG/Opus or MP3; anything else is
		// delivered as a plain file.
		if !bytes.HasPrefix(up.Data, []byte("OggS")) && !bytes.HasPrefix(up.Data, []byte("ID3")) {
			kind = "document"
		}
	}
	duration, _ := strconv.Atoi(p.Get("duration"))
	c := s.chat(chatID, map[string]any{"id": chatID, "type": "private"})
	replyTo, _ := strconv.Atoi(p.Get("reply_to_message_id"))
	c.nextID++
	cp := up
	m := &Message{ID: c.nextID, ChatID: chatID, From: s.bot, Kind: kind, Caption: caption, ParseMode: p.Get("parse_mode"),
		ReplyTo: replyTo, File: &cp, Duration: duration, extra: map[string]any{}}
	if len(ents) > 0 {
		m.extra["caption_entities"] = ents
	}
	s.describe(m, up, duration)
	c.messages = append(c.messages, m)
	return s.wire(c, m), nil
}

// describe keeps a sent file for getFile and sets the message's file
// object as the API shows it; s.mu is held.
func (s *Server) describe(m *Message, up Upload, duration int) {
	mt := up.ContentType
	if mt == "" || mt == "application/octet-stream" {
		mt = mime.TypeByExtension(ext(up.Name, ""))
	}
	switch m.Kind {
	case "photo":
		cfg, _, _ := image.DecodeConfig(bytes.NewReader(up.Data))
		w := fileWire(s.store("photos", ".jpg", up.Data, 0))
		w["width"], w["height"] = cfg.Width, cfg.Height
		m.extra["photo"] = []map[string]any{w}
	case "voice":
		w := fileWire(s.store("voice", ".oga", up.Data, 0))
		w["duration"], w["mime_type"] = duration, "audio/ogg"
		m.extra["voice"] = w
	case "audio":
		w := fileWire(s.store("music", ext(up.Name, ".mp3"), up.Data, 0))
		w["duration"] = duration
		setOpt(w, "file_name", up.Name)
		setOpt(w, "mime_type", mt)
		m.extra["audio"] = w
	default:
		w := fileWire(s.store("documents", ext(up.Name, ""), up.Data, 0))
		setOpt(w, "file_name", up.Name)
		setOpt(w, "mime_type", mt)
		m.extra["document"] = w
	}
}

// captionOf parses a file's caption by parse_mode and checks its length.
func captionOf(p url.Values) (string, []Entity, *apiError) {
	text := p.Get("caption")
	if text == "" {
		return "", nil, nil
	}
	shown, ents := text, []Entity(nil)
	switch strings.ToLower(p.Get("parse_mode")) {
	case "":
	case "html":
		var refused string
		if shown, ents, refused = parseHTMLEntities(text); refused != "" {
			return "", nil, badRequest("can't parse entities: " + refused)
		}
	default:
		return "", nil, badRequest("unsupported parse_mode " + p.Get("parse_mode") + " in telegramtest")
	}
	if utf16Len(shown) > MaxCaption {
		return "", nil, badRequest("message caption is too long")
	}
	return shown, ents, nil
}

// checkPhoto refuses what sendPhoto refuses: more than 10 MB, bytes that
// are no image, width and height over 10000 together or a side over 20
// times the other.
func checkPhoto(data []byte) *apiError {
	if len(data) > MaxPhoto {
		return badRequest("PHOTO_SAVE_FILE_INVALID")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return badRequest("IMAGE_PROCESS_FAILED")
	}
	w, h := cfg.Width, cfg.Height
	if w <= 0 || h <= 0 || w+h > 10000 || w > 20*h || h > 20*w {
		return badRequest("PHOTO_INVALID_DIMENSIONS")
	}
	return nil
}
