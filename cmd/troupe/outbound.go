package main

import (
	"log/slog"

	"troupe/bot"
	"troupe/config"
	"troupe/llm"
	"troupe/usage"
)

// outboundMedia builds the pipeline's speech client (tts) and picture
// client (image), each nil when its base_url is not set; each is sent its
// own api_key, else the main model's only on the main model's server. They
// take the main model's timeout and retries.
func outboundMedia(cfg config.Config, log *slog.Logger, meter usage.Meter) (voicer bot.Voicer, painter bot.Painter) {
	m := cfg.Model
	if t := cfg.SpeechEndpoint(); t.On() {
		voicer = llm.New(llm.Config{BaseURL: t.BaseURL, APIKey: t.APIKey.Value(), Model: t.Model, SpeechFormat: t.Format,
			Timeout: m.Timeout, MaxRetries: retries(m.MaxRetries), Meter: meter}, log.With("endpoint", "tts"))
	}
	if i := cfg.ImageEndpoint(); i.On() {
		painter = llm.New(llm.Config{BaseURL: i.BaseURL, APIKey: i.APIKey.Value(), Model: i.Model, ImageSize: i.Size,
			Timeout: m.Timeout, MaxRetries: retries(m.MaxRetries), Meter: meter}, log.With("endpoint", "image"))
	}
	return voicer, painter
}
