package telegramtest

import (
	"path"
	"strings"
)

// PhotoSize is one size of a photo a user sends. Telegram sends a photo as
// several sizes, smallest first.
type PhotoSize struct {
	Width, Height int
	Data          []byte
	// FileSize is the size reported: 0 reports len(Data), a negative
	// size none.
	FileSize int
}

// Document is a file a user sends as a file.
type Document struct {
	FileName, MIMEType string
	Data               []byte
	// FileSize is as PhotoSize's.
	FileSize int
}

// Voice is a voice note a user records.
type Voice struct {
	// Duration is in seconds.
	Duration int
	// MIMEType is "audio/ogg" when empty.
	MIMEType string
	Data     []byte
	// FileSize is as PhotoSize's.
	FileSize int
}

// Audio is a music or sound file a user sends.
type Audio struct {
	// Duration is in seconds.
	Duration                             int
	Performer, Title, FileName, MIMEType string
	Data                                 []byte
	// FileSize is as PhotoSize's.
	FileSize int
}

// Media is what a user's message carries besides text: its caption and
// one photo, document, voice note or audio file, as Telegram delivers
// them.
type Media struct {
	Caption  string
	Photo    []PhotoSize
	Document *Document
	Voice    *Voice
	Audio    *Audio
}

// SendMedia has user send m to the bot in their private chat and queues
// the update. The files are kept for getFile and the file endpoint. It
// returns the update's and the message's ids.
func (s *Server) SendMedia(from User, m Media) (updateID, messageID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.strangers, from.ID)
	return s.pushMessage(from.ID, privateInfo(from), s.mediaMessage(from, m, 0))
}

// SendGroupMedia has user send m in a group chat, replying to the message
// replyTo when it is not 0, and queues the update.
func (s *Server) SendGroupMedia(chat Chat, from User, m Media, replyTo int) (updateID, messageID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushMessage(chat.ID, groupInfo(chat), s.mediaMessage(from, m, replyTo))
}

// mediaMessage stores m's files and returns the message that carries
// them; s.mu is held.
func (s *Server) mediaMessage(from User, m Media, replyTo int) *Message {
	msg := &Message{From: from, Caption: m.Caption, ReplyTo: replyTo, extra: map[string]any{}}
	if len(m.Photo) > 0 {
		var sizes []map[string]any
		for _, p := range m.Photo {
			f := s.store("photos", ".jpg", p.Data, p.FileSize)
			w := fileWire(f)
			w["width"], w["height"] = p.Width, p.Height
			sizes = append(sizes, w)
		}
		msg.Kind, msg.extra["photo"] = "photo", sizes
	}
	if d := m.Document; d != nil {
		w := fileWire(s.store("documents", ext(d.FileName, ""), d.Data, d.FileSize))
		setOpt(w, "file_name", d.FileName)
		setOpt(w, "mime_type", d.MIMEType)
		msg.Kind, msg.extra["document"] = "document", w
	}
	if v := m.Voice; v != nil {
		mime := v.MIMEType
		if mime == "" {
			mime = "audio/ogg"
		}
		w := fileWire(s.store("voice", ".oga", v.Data, v.FileSize))
		w["duration"], w["mime_type"] = v.Duration, mime
		msg.Kind, msg.extra["voice"] = "voice", w
	}
	if a := m.Audio; a != nil {
		w := fileWire(s.store("music", ext(a.FileName, ".mp3"), a.Data, a.FileSize))
		w["duration"] = a.Duration
		setOpt(w, "performer", a.Performer)
		setOpt(w, "title", a.Title)
		setOpt(w, "file_name", a.FileName)
		setOpt(w, "mime_type", a.MIMEType)
		msg.Kind, msg.extra["audio"] = "audio", w
	}
	return msg
}

// fileWire is the fields every file object has.
func fileWire(f *storedFile) map[string]any {
	w := map[string]any{"file_id": f.FileID, "file_unique_id": f.FileUniqueID}
	if f.FileSize > 0 {
		w["file_size"] = f.FileSize
	}
	return w
}

// setOpt sets an optional string field when it is not empty.
func setOpt(w map[string]any, key, value string) {
	if value != "" {
		w[key] = value
	}
}

// ext is name's extension, lower case, or def when it has none.
func ext(name, def string) string {
	if e := path.Ext(name); e != "" {
		return strings.ToLower(e)
	}
	return def
}
