package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"

	"troupe/bot"
	"troupe/config"
	"troupe/llm"
	"troupe/media"
	"troupe/usage"
)

// captionTemperature keeps captions factual.
const captionTemperature = 0.2

// inboundMedia is the pipeline's part of what players send: whether the
// model sees pictures, the caption model (media.caption_model at
// model.base_url; nil uses the chat model), the transcriber (stt.*; nil
// hears no voice notes) and the limits and keeping of media.*.
type inboundMedia struct {
	vision  bool
	caption bot.Model
	stt     bot.Transcriber
	opt     bot.MediaOptions
}

// newInboundMedia builds the clients of media.* and stt.* from cfg.
func newInboundMedia(cfg config.Config, log *slog.Logger, meter usage.Meter) inboundMedia {
	m, mc := cfg.Model, cfg.Media
	in := inboundMedia{vision: m.Vision, opt: bot.MediaOptions{
		Limits: media.Limits{MaxImages: mc.MaxImages, MaxImageBytes: int64(mc.MaxImageBytes), MaxAudioBytes: int64(mc.MaxAudioBytes),
			MaxTextChars: mc.MaxTextChars}.WithDefaults(),
		Timeout: mc.Timeout,
	}}
	if mc.Keep {
		in.opt.Keep = media.Keep{Dir: mc.Dir}
	}
	if m.Vision && mc.CaptionModel != "" {
		in.caption = llm.New(llm.Config{BaseURL: m.BaseURL, APIKey: m.APIKey.Value(), Model: mc.CaptionModel, Temperature: captionTemperature,
			Timeout: mc.Timeout, MaxRetries: retries(m.MaxRetries), Meter: meter}, log)
	}
	if s := cfg.STTEndpoint(); s.On() {
		in.stt = llm.New(llm.Config{BaseURL: s.BaseURL, APIKey: s.APIKey.Value(), Model: s.Model, Language: s.Language,
			Timeout: mc.Timeout, MaxRetries: retries(m.MaxRetries), Meter: meter}, log)
	}
	return in
}

// forgetKept is the removal of a forgotten chat's kept originals. It runs
// with media.keep off too: originals kept before it was turned off still go
// with their chat. nil when media.dir is empty.
func forgetKept(cfg config.Config) func(chatID string) error {
	if cfg.Media.Dir == "" {
		return nil
	}
	return media.Keep{Dir: cfg.Media.Dir}.ForgetChat
}

// checkSTT sends the transcription endpoint half a second of silence.
func checkSTT(ctx context.Context, cfg config.Config) probe {
	s := cfg.STTEndpoint()
	if !s.On() {
		return skipped("stt.base_url is not set")
	}
	body, ctype, err := silenceForm(s.Model)
	if err != nil {
		return failed(false, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpointURL(s.BaseURL, "audio/transcriptions"), body)
	if err != nil {
		return failed(true, "stt.base_url is not a URL")
	}
	req.Header.Set("Content-Type", ctype)
	if k := s.APIKey.Value(); k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return failed(false, "cannot reach %s (stt.base_url): %v", host(s.BaseURL), err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch st := resp.StatusCode; {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return failed(true, "%s", refused("stt", "speech-to-text", st, s.APIKey.Value(), s.BaseURL))
	case st >= 200 && st < 300:
		return ok("%s transcribes with %s", host(s.BaseURL), s.Model)
	case st == http.StatusNotFound || (st == http.StatusBadRequest && modelProblem(data)):
		return failed(true, "stt: %s answered HTTP %d: check stt.model %q and the base_url's path (…/v1)", host(s.BaseURL), st, s.Model)
	default:
		return failed(false, "%s answered HTTP %d", host(s.BaseURL), st)
	}
}

// silenceForm is a transcription request of half a second of silence (a
// 16 kHz mono WAV file) for model.
func silenceForm(model string) (io.Reader, string, error) {
	const rate, samples = 16000, 8000
	var wav bytes.Buffer
	wav.WriteString("RIFF")
	_ = binary.Write(&wav, binary.LittleEndian, uint32(36+samples*2))
	wav.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		_ = binary.Write(&wav, binary.LittleEndian, v)
	}
	wav.WriteString("data")
	_ = binary.Write(&wav, binary.LittleEndian, uint32(samples*2))
	wav.Write(make([]byte, samples*2))
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, err := w.CreateFormFile("file", "silence.wav")
	if err == nil {
		_, err = f.Write(wav.Bytes())
	}
	if err == nil {
		err = w.WriteField("model", model)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("build the stt check: %w", err)
	}
	return &b, w.FormDataContentType(), nil
}
