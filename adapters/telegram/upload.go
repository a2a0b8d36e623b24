package telegram

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
	"troupe/media"
)

// Telegram's limits on the files a bot sends.
const (
	// maxUpload is the largest file a bot may upload.
	maxUpload = 50 << 20
	// maxPhoto is the largest picture sendPhoto takes; a bigger one goes
	// as a file.
	maxPhoto = 10 << 20
	// maxCaption is the longest caption, in UTF-16 code units.
	maxCaption = 1024
	// uploadTimeout bounds one upload.
	uploadTimeout = 2 * time.Minute
)

var _ bot.FileSender = (*sink)(nil)

// SendFile sends f to the sink's chat: a voice note (Opus in Ogg) with
// sendVoice, other sound with sendAudio, a picture with sendPhoto under
// its caption, anything else as a file. In a scene the caption starts
// with the speaker's name; in a group the file replies to the message the
// text reply answers, which keeps it in that message's topic.
// A file over Telegram's 50 MB is ErrFileTooLarge; Telegram's refusal is
// an *APIError.
func (s *sink) SendFile(ctx context.Context, f media.File) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopTyping()
	// In a scene the file is its speaker's, named as the text's head is.
	if s.name != "" {
		f.Caption = strings.TrimSpace(s.name + "\n" + f.Caption)
	}
	err := s.a.sendFile(ctx, s.chatID, s.replyTo, f)
	if err != nil && s.origin != nil && forbidden(err) {
		return s.cannotWrite(ctx, err)
	}
	return err
}

// sendFile uploads f to a chat, replying to replyTo when not 0.
func (a *Adapter) sendFile(ctx context.Context, chatID int64, replyTo int, f media.File) error {
	if len(f.Data) == 0 {
		return fmt.Errorf("telegram: send file %q: no data", f.Name)
	}
	if len(f.Data) > maxUpload {
		return fmt.Errorf("%w: %q is %d bytes", ErrFileTooLarge, f.Name, len(f.Data))
	}
	method, field := fileMethod(f)
	params := tgbotapi.Params{}
	params.AddNonZero64("chat_id", chatID)
	if replyTo != 0 {
		params.AddNonZero("reply_to_message_id", replyTo)
		params.AddBool("allow_sending_without_reply", true)
	}
	params.AddNonEmpty("caption", clipCaption(f.Caption))
	if (method == "sendVoice" || method == "sendAudio") && f.Duration > 0 {
		params.AddNonZero("duration", int((f.Duration+time.Second-1)/time.Second))
	}
	name := fileName(f)
	err := a.upload(ctx, method, params, tgbotapi.RequestFile{Name: field, Data: tgbotapi.FileBytes{Name: name, Bytes: f.Data}})
	if method == "sendPhoto" && photoRefused(err) {
		// A picture Telegram will not show as a photo (its sides) still
		// goes, as a file.
		a.log.Info("photo refused, sending it as a file", "chat_id", chatID, "err", err)
		err = a.upload(ctx, "sendDocument", params, tgbotapi.RequestFile{Name: "document", Data: tgbotapi.FileBytes{Name: name, Bytes: f.Data}})
	}
	return err
}

// fileMethod is the method that sends f and its file's form field.
func fileMethod(f media.File) (method, field string) {
	mt, _, _ := mime.ParseMediaType(f.MIME)
	switch {
	case f.Kind == media.Voice && (mt == "audio/ogg" || mt == "audio/opus"):
		return "sendVoice", "voice"
	case f.Kind == media.Voice, f.Kind == media.Audio:
		return "sendAudio", "audio"
	case f.Kind == media.Image && len(f.Data) <= maxPhoto:
		return "sendPhoto", "photo"
	}
	return "sendDocument", "document"
}

// fileName is f's name, or one for its kind.
func fileName(f media.File) string {
	if f.Name != "" {
		return f.Name
	}
	switch f.Kind {
	case media.Voice:
		return "voice.ogg"
	case media.Audio:
		return "audio.mp3"
	case media.Image:
		return "picture.png"
	}
	return "file"
}

// clipCaption cuts a caption to Telegram's limit, ending it with "…" when
// cut.
func clipCaption(text string) string {
	if utf16Len(text) <= maxCaption {
		return text
	}
	n := 0
	for i, r := range text {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if n+w > maxCaption-1 {
			return strings.TrimRight(text[:i], " \n") + "…"
		}
		n += w
	}
	return text
}

// photoRefused reports Telegram's refusal of a picture as a photo: too
// big for one, or its sides out of proportion.
func photoRefused(err error) bool {
	e, ok := asAPI(err)
	return ok && e.Code == 400 && (strings.Contains(e.Description, "PHOTO_INVALID_DIMENSIONS") || strings.Contains(e.Description, "PHOTO_SAVE_FILE_INVALID"))
}

// upload sends a file with method, waiting out flood control as a.do
// does.
func (a *Adapter) upload(ctx context.Context, method string, params tgbotapi.Params, file tgbotapi.RequestFile) error {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, uploadTimeout)
		resp, err := a.bot(cctx).UploadFiles(method, params, []tgbotapi.RequestFile{file})
		cancel()
		if err == nil {
			return nil
		}
		// The library leaves an upload's error code out: the answer has it.
		var te *tgbotapi.Error
		if errors.As(err, &te) && te.Code == 0 && resp != nil {
			te.Code = resp.ErrorCode
		}
		err = apiError(method, a.cfg.Token.Value(), err)
		d, limited := retryAfter(err)
		if !limited || attempt >= a.maxWaits {
			return err
		}
		a.log.Warn("flood control: waiting", "method", method, "retry_after", d)
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}
