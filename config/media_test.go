package config

import (
	"errors"
	"testing"
	"time"
)

// The media and stt defaults are the contract's, and the environment sets
// each key as any other.
func TestMediaDefaultsAndEnv(t *testing.T) {
	t.Parallel()
	d := Default()
	if d.Model.Vision || d.Media.MaxImages != 4 || d.Media.MaxImageBytes != 8<<20 || d.Media.MaxAudioBytes != 25<<20 ||
		d.Media.MaxTextChars != 8000 || d.Media.Keep || d.Media.Dir != "media" || d.Media.Timeout != time.Minute ||
		d.STT.On() || d.STT.Model != "whisper-1" {
		t.Errorf("defaults: model.vision %v, media %+v, stt %+v", d.Model.Vision, d.Media, d.STT)
	}
	c, err := Load(writeConfig(t, ""), envMap(map[string]string{
		"TROUPE_MODEL_VISION": "true", "TROUPE_MEDIA_MAX_IMAGES": "2", "TROUPE_MEDIA_MAX_IMAGE_BYTES": "1000",
		"TROUPE_MEDIA_CAPTION_MODEL": "gpt-4o", "TROUPE_MEDIA_KEEP": "true", "TROUPE_MEDIA_DIR": "/var/troupe/media",
		"TROUPE_MEDIA_TIMEOUT": "20s", "TROUPE_STT_BASE_URL": "http://127.0.0.1:8000/v1", "TROUPE_STT_LANGUAGE": "zh",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Model.Vision || c.Media.MaxImages != 2 || c.Media.MaxImageBytes != 1000 || c.Media.CaptionModel != "gpt-4o" ||
		!c.Media.Keep || c.Media.Dir != "/var/troupe/media" || c.Media.Timeout != 20*time.Second ||
		c.STT.BaseURL != "http://127.0.0.1:8000/v1" || c.STT.Language != "zh" || c.STT.Model != "whisper-1" {
		t.Errorf("from the environment: vision %v, media %+v, stt %+v", c.Model.Vision, c.Media, c.STT)
	}
}

// Each bad media or stt setting is refused naming its key; a complete
// setup passes.
func TestMediaSettingsAreValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		edit func(*Config)
	}{
		{"media.max_images", func(c *Config) { c.Media.MaxImages = 0 }},
		{"media.max_image_bytes", func(c *Config) { c.Media.MaxImageBytes = 0 }},
		{"media.max_audio_bytes", func(c *Config) { c.Media.MaxAudioBytes = -5 }},
		{"media.max_text_chars", func(c *Config) { c.Media.MaxTextChars = 0 }},
		{"media.dir", func(c *Config) { c.Media.Keep, c.Media.Dir = true, " " }},
		{"media.timeout", func(c *Config) { c.Media.Timeout = 0 }},
		{"media.caption_model", func(c *Config) { c.Media.CaptionModel = "gpt-4o" }},
		{"stt.base_url", func(c *Config) { c.STT.BaseURL = "localhost:8000" }},
		{"stt.base_url", func(c *Config) { c.STT.APIKey = "sk-x" }},
		{"stt.base_url", func(c *Config) { c.STT.Language = "en" }},
		{"stt.model", func(c *Config) { c.STT.BaseURL, c.STT.Model = "http://127.0.0.1:8000/v1", "" }},
		{"stt.language", func(c *Config) { c.STT.BaseURL, c.STT.Language = "http://127.0.0.1:8000/v1", "English" }},
	}
	for _, tt := range tests {
		c := Default()
		tt.edit(&c)
		var e *Error
		if err := c.Validate(); !errors.As(err, &e) || e.Key != tt.key || e.Problem == "" {
			t.Errorf("%s: got %v, want an error naming the key with a reason", tt.key, err)
		}
	}
	c := Default()
	c.Model.Vision, c.Media.CaptionModel, c.Media.Keep = true, "gpt-4o", true
	c.STT = STT{BaseURL: "http://127.0.0.1:8000/v1", Model: "Systran/faster-whisper-small", Language: "en"}
	if err := c.Validate(); err != nil {
		t.Errorf("a complete media setup refused: %v", err)
	}
}

// The stt endpoint borrows the main model's key only on its server.
func TestSTTKey(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Model.APIKey = "sk-main"
	c.STT.BaseURL = "https://api.openai.com/v1"
	if got := c.STTEndpoint().APIKey; got != "sk-main" {
		t.Errorf("stt on the main server sends %q, want the main key", got.Value())
	}
	c.STT.BaseURL = "http://127.0.0.1:8000/v1"
	if got := c.STTEndpoint().APIKey; got != "" {
		t.Errorf("stt elsewhere sends a key %q, want none", got.Value())
	}
	if side := c.KeylessSideEndpoints(); len(side) != 1 || side[0] != "stt" {
		t.Errorf("keyless side endpoints %v, want stt", side)
	}
}
