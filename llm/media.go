package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // pictures an image endpoint may answer
	_ "image/jpeg" // (DecodeConfig knows only registered formats)
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	oai "github.com/sashabaranov/go-openai"

	"troupe/bot"
	"troupe/media"
)

// maxMediaAnswer bounds a spoken reply or a picture the endpoints answer:
// the size of the largest file the chat platforms take from a bot.
const maxMediaAnswer = 25 << 20

// defaultVoice is the voice asked for when the caller names none.
const defaultVoice = "alloy"

// defaultAudioName names an uploaded recording that has no name (Telegram
// voice notes): the endpoint guesses the format from its extension.
const defaultAudioName = "voice.ogg"

// Transcribe turns audio into text through the endpoint's
// /audio/transcriptions with the client's model (and Language, when set),
// and returns the transcript trimmed. Errors are *bot.ModelError values of
// source "stt": the endpoint's failure classified as for chat (an HTTP 413,
// a file too large for the endpoint, is a bad_request), "empty" for no
// audio or a transcript with no text. A cancelled ctx returns its error.
func (c *Client) Transcribe(ctx context.Context, audio media.File) (string, error) {
	if len(audio.Data) == 0 {
		return "", &bot.ModelError{Kind: kindEmpty, Source: sourceSTT, Err: errors.New("openai: transcribe: no audio")}
	}
	name := cmp.Or(audio.Name, defaultAudioName)
	var text string
	_, err := c.retry(ctx, "transcribe", func(actx context.Context, info *responseInfo) (bot.ModelResult, bool, error) {
		resp, err := c.api.CreateTranscription(actx, oai.AudioRequest{
			Model:    c.cfg.Model,
			FilePath: name,
			Reader:   oai.WrapReader(bytes.NewReader(audio.Data), name, audio.MIME),
			Language: c.cfg.Language,
			Format:   oai.AudioResponseFormatJSON,
		})
		if err != nil {
			return bot.ModelResult{}, false, c.mediaError(ctx, actx, info, "transcribe", err)
		}
		text = strings.TrimSpace(resp.Text)
		return bot.ModelResult{}, false, nil
	})
	if err == nil && text == "" {
		err = &bot.ModelError{Kind: kindEmpty, Err: errors.New("openai: transcribe: no text heard")}
	}
	meter(ctx, c.cfg.Meter, "stt", 0, 0, err)
	return text, sourced(err, sourceSTT)
}

// Speak says text with voice ("" for alloy) through the endpoint's
// /audio/speech in SpeechFormat, and returns the answer as a file: a Voice
// note (reply.ogg, audio/ogg) when it is Ogg, an Audio file (reply.mp3,
// audio/mpeg, or .wav, .flac, .aac) otherwise. What it is comes from the
// answer's bytes, else its Content-Type, never from what was asked. Errors
// are *bot.ModelError values of source "tts": the endpoint's failure
// classified as for chat, "bad_request" for no text, "bad_answer" for an
// answer over 25 MB or of no audio format known, "empty" for no bytes. A
// cancelled ctx returns its error.
func (c *Client) Speak(ctx context.Context, text, voice string) (media.File, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return media.File{}, &bot.ModelError{Kind: kindBadRequest, Source: sourceTTS, Err: errors.New("openai: speak: no text")}
	}
	var file media.File
	_, err := c.retry(ctx, "speak", func(actx context.Context, info *responseInfo) (bot.ModelResult, bool, error) {
		raw, err := c.api.CreateSpeech(actx, oai.CreateSpeechRequest{
			Model:          oai.SpeechModel(c.cfg.Model),
			Input:          text,
			Voice:          oai.SpeechVoice(cmp.Or(voice, defaultVoice)),
			ResponseFormat: oai.SpeechResponseFormat(cmp.Or(c.cfg.SpeechFormat, DefaultSpeechFormat)),
		})
		if err != nil {
			return bot.ModelResult{}, false, c.mediaError(ctx, actx, info, "speak", err)
		}
		defer raw.Close()
		data, err := readAnswer(raw)
		if err != nil {
			return bot.ModelResult{}, false, c.answerError(ctx, actx, "speak", err)
		}
		file, err = speechFile(data, raw.Header().Get("Content-Type"))
		if err != nil {
			return bot.ModelResult{}, false, c.answerError(ctx, actx, "speak", err)
		}
		return bot.ModelResult{}, false, nil
	})
	meter(ctx, c.cfg.Meter, "tts", 0, 0, err)
	return file, sourced(err, sourceTTS)
}

// Paint asks the endpoint's /images/generations for one picture of prompt
// at ImageSize, as b64_json, and returns it as an Image file (picture.png,
// .jpg or .gif, by what the bytes are). An answer that carries only a URL
// is downloaded when the URL is on the API's own scheme and host, and
// refused otherwise. Errors are *bot.ModelError values of source "image":
// the endpoint's failure classified as for chat, "bad_request" for no
// prompt, "bad_answer" for an answer that holds no picture, not a PNG,
// JPEG or GIF, one over 25 MB, or a URL elsewhere. A cancelled ctx returns
// its error.
func (c *Client) Paint(ctx context.Context, prompt string) (media.File, error) {
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return media.File{}, &bot.ModelError{Kind: kindBadRequest, Source: sourceImage, Err: errors.New("openai: paint: no prompt")}
	}
	var file media.File
	_, err := c.retry(ctx, "paint", func(actx context.Context, info *responseInfo) (bot.ModelResult, bool, error) {
		resp, err := c.api.CreateImage(actx, oai.ImageRequest{
			Prompt:         prompt,
			Model:          c.cfg.Model,
			N:              1,
			Size:           cmp.Or(c.cfg.ImageSize, DefaultImageSize),
			ResponseFormat: oai.CreateImageResponseFormatB64JSON,
		})
		if err != nil {
			return bot.ModelResult{}, false, c.mediaError(ctx, actx, info, "paint", err)
		}
		data, err := c.pictureBytes(actx, resp)
		if err != nil {
			return bot.ModelResult{}, false, c.answerError(ctx, actx, "paint", err)
		}
		file, err = pictureFile(data)
		if err != nil {
			return bot.ModelResult{}, false, c.answerError(ctx, actx, "paint", err)
		}
		return bot.ModelResult{}, false, nil
	})
	meter(ctx, c.cfg.Meter, "image", 0, 0, err)
	return file, sourced(err, sourceImage)
}

// errAnswer marks a media answer that came but is not what the protocol
// says.
var errAnswer = errors.New("answer")

// pictureBytes returns the picture of an image answer: its b64_json
// decoded, else its URL's bytes when the URL is the API's own.
func (c *Client) pictureBytes(ctx context.Context, resp oai.ImageResponse) ([]byte, error) {
	if len(resp.Data) == 0 {
		return nil, fmt.Errorf("%w holds no picture", errAnswer)
	}
	d := resp.Data[0]
	switch {
	case d.B64JSON != "":
		if base64.StdEncoding.DecodedLen(len(d.B64JSON)) > maxMediaAnswer {
			return nil, fmt.Errorf("%w: picture over %d MB", errAnswer, maxMediaAnswer>>20)
		}
		data, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return nil, fmt.Errorf("%w: b64_json: %w", errAnswer, err)
		}
		return data, nil
	case d.URL != "":
		return c.download(ctx, d.URL)
	}
	return nil, fmt.Errorf("%w holds neither b64_json nor url", errAnswer)
}

// download fetches a picture an image answer links to, only from the
// API's own scheme and host: a link elsewhere could point anywhere (a
// host on the private network) and is refused. No API key is sent.
func (c *Client) download(ctx context.Context, link string) ([]byte, error) {
	u, err := url.Parse(link)
	if err != nil {
		return nil, fmt.Errorf("%w: picture url does not parse", errAnswer)
	}
	base, _ := url.Parse(cmp.Or(c.cfg.BaseURL, oai.DefaultConfig("").BaseURL))
	if base == nil || !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) {
		return nil, fmt.Errorf("%w: picture url is on %s://%s, not the API's host; refused", errAnswer, u.Scheme, u.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &downloadStatus{status: resp.StatusCode}
	}
	return readAnswer(resp.Body)
}

// downloadStatus is a picture link that answered other than 200.
type downloadStatus struct{ status int }

func (e *downloadStatus) Error() string {
	return fmt.Sprintf("picture url answered HTTP %d", e.status)
}

// readAnswer reads a media answer of at most maxMediaAnswer bytes.
func readAnswer(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxMediaAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMediaAnswer {
		return nil, fmt.Errorf("%w over %d MB", errAnswer, maxMediaAnswer>>20)
	}
	return data, nil
}

// speechFile names a speech answer by what its bytes are, else by its
// Content-Type.
func speechFile(data []byte, contentType string) (media.File, error) {
	if len(data) == 0 {
		return media.File{}, errNoAudio
	}
	voice := media.File{Kind: media.Voice, Name: "reply.ogg", MIME: "audio/ogg", Data: data}
	audio := func(ext, mimeType string) media.File {
		return media.File{Kind: media.Audio, Name: "reply." + ext, MIME: mimeType, Data: data}
	}
	switch {
	case bytes.HasPrefix(data, []byte("OggS")):
		return voice, nil
	case bytes.HasPrefix(data, []byte("ID3")) || mpegFrame(data):
		return audio("mp3", "audio/mpeg"), nil
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return audio("wav", "audio/wav"), nil
	case bytes.HasPrefix(data, []byte("fLaC")):
		return audio("flac", "audio/flac"), nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "audio/ogg", "audio/opus":
		return voice, nil
	case "audio/mpeg", "audio/mp3":
		return audio("mp3", "audio/mpeg"), nil
	case "audio/aac":
		return audio("aac", "audio/aac"), nil
	case "audio/wav", "audio/x-wav", "audio/wave":
		return audio("wav", "audio/wav"), nil
	case "audio/flac":
		return audio("flac", "audio/flac"), nil
	}
	return media.File{}, fmt.Errorf("%w is no audio format known (Content-Type %q)", errAnswer, contentType)
}

// errNoAudio is a speech answer with no bytes.
var errNoAudio = errors.New("answer has no audio")

// mpegFrame reports whether data starts with an MPEG audio frame header
// (an MP3 without ID3 tag): 11 sync bits, then a layer other than the
// reserved 00 (which ADTS AAC uses).
func mpegFrame(data []byte) bool {
	return len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0 && data[1]&0x06 != 0
}

// pictureFile names a picture by what its bytes decode as.
func pictureFile(data []byte) (media.File, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return media.File{}, fmt.Errorf("%w is not a PNG, JPEG or GIF picture: %w", errAnswer, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return media.File{}, fmt.Errorf("%w is a picture of no size", errAnswer)
	}
	f := media.File{Kind: media.Image, Data: data}
	switch format {
	case "png":
		f.Name, f.MIME = "picture.png", "image/png"
	case "jpeg":
		f.Name, f.MIME = "picture.jpg", "image/jpeg"
	case "gif":
		f.Name, f.MIME = "picture.gif", "image/gif"
	default:
		return media.File{}, fmt.Errorf("%w is a %s picture, not PNG, JPEG or GIF", errAnswer, format)
	}
	return f, nil
}

// mediaError is requestError for the media endpoints: an HTTP 413 there
// is a file too large, not a prompt over a context window, and a body that
// does not parse is a bad answer (for chat it is an empty one).
func (c *Client) mediaError(ctx, actx context.Context, info *responseInfo, op string, err error) error {
	err = c.requestError(ctx, actx, info, op, err)
	var me *bot.ModelError
	if errors.As(err, &me) {
		switch me.Kind {
		case kindTooLong:
			me.Kind = kindBadRequest
		case kindEmpty:
			me.Kind = kindBadAnswer
		}
	}
	return err
}

// answerError is the error for a media answer that arrived but could not
// be read or used: the context's end, a transport failure (retried), a
// link that answered an error status, or a bad answer.
func (c *Client) answerError(ctx, actx context.Context, op string, err error) error {
	if cerr := c.contextError(ctx, actx, op, err); cerr != nil {
		return cerr
	}
	var ds *downloadStatus
	switch {
	case errors.Is(err, errNoAudio):
		return &bot.ModelError{Kind: kindEmpty, Err: c.wrap(op, err)}
	case errors.Is(err, errAnswer):
		return &bot.ModelError{Kind: kindBadAnswer, Err: c.wrap(op, err)}
	case errors.As(err, &ds):
		return &bot.ModelError{Kind: statusKind(ds.status), StatusCode: ds.status, Err: c.wrap(op, err)}
	case isTimeout(err):
		return &bot.ModelError{Kind: kindTimeout, Err: c.wrap(op, err)}
	}
	// The body broke off: the answer never arrived whole.
	return &bot.ModelError{Kind: kindUnavailable, Err: c.wrap(op, err)}
}
