package config

import (
	"errors"
	"strings"
	"testing"
)

// Off by default: tts and image have their documented defaults and no
// endpoint.
func TestOutboundMediaDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	if c.TTS.On() || c.Image.On() {
		t.Fatalf("tts or image on by default: %+v %+v", c.TTS, c.Image)
	}
	if c.TTS.Model != "tts-1" || c.TTS.Voice != "alloy" || c.TTS.Format != "opus" {
		t.Errorf("tts defaults = %+v, want tts-1, alloy, opus", c.TTS)
	}
	if c.Image.Model != "dall-e-3" || c.Image.Size != "1024x1024" {
		t.Errorf("image defaults = %+v, want dall-e-3, 1024x1024", c.Image)
	}
}

// Each bad tts or image value is refused naming its key and saying what
// is wrong; complete endpoints pass.
func TestOutboundMediaSettingsAreValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, says string
		edit      func(*Config)
	}{
		{"tts.base_url", "http(s) URL", func(c *Config) { c.TTS.BaseURL = "ftp://speech" }},
		{"tts.model", "must name a model", func(c *Config) { c.TTS.BaseURL, c.TTS.Model = "http://127.0.0.1:1/v1", " " }},
		{"tts.voice", "must name a voice", func(c *Config) { c.TTS.BaseURL, c.TTS.Voice = "http://127.0.0.1:1/v1", "" }},
		{"tts.format", "opus", func(c *Config) { c.TTS.Format = "wav" }},
		{"image.base_url", "http(s) URL", func(c *Config) { c.Image.BaseURL = "images.example.com" }},
		{"image.model", "must name a model", func(c *Config) { c.Image.BaseURL, c.Image.Model = "http://127.0.0.1:1/v1", "" }},
		{"image.size", "WIDTHxHEIGHT", func(c *Config) { c.Image.Size = "large" }},
		{"image.size", "WIDTHxHEIGHT", func(c *Config) { c.Image.Size = "1024*1024" }},
		{"image.size", "64 to 4096", func(c *Config) { c.Image.Size = "8192x1024" }},
		{"image.size", "64 to 4096", func(c *Config) { c.Image.Size = "1024x0" }},
	}
	for _, tt := range tests {
		c := Default()
		tt.edit(&c)
		var e *Error
		if err := c.Validate(); !errors.As(err, &e) || e.Key != tt.key || !strings.Contains(e.Problem, tt.says) {
			t.Errorf("%s: got %v, want an error naming the key that says %q", tt.key, err, tt.says)
		}
	}
	c := Default()
	c.TTS = TTS{BaseURL: "http://127.0.0.1:8000/v1", Model: "kokoro", Voice: "af_bella", Format: "mp3"}
	c.Image = Image{BaseURL: "https://api.openai.com/v1", Model: "gpt-image-1", Size: "1536x1024"}
	if err := c.Validate(); err != nil {
		t.Errorf("complete endpoints refused: %v", err)
	}
}

// TROUPE_TTS_* and TROUPE_IMAGE_* override the file; a bad value from the
// environment names its variable.
func TestOutboundMediaFromEnv(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "tts:\n  base_url: http://speech.local/v1\n  voice: nova\nimage:\n  size: 512x512\n")
	c, err := Load(path, envMap(map[string]string{
		"TROUPE_TTS_VOICE": "echo", "TROUPE_TTS_FORMAT": "mp3", "TROUPE_TTS_API_KEY": "sk-speech",
		"TROUPE_IMAGE_BASE_URL": "http://images.local/v1", "TROUPE_IMAGE_SIZE": "1792x1024",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.TTS.BaseURL != "http://speech.local/v1" || c.TTS.Voice != "echo" || c.TTS.Format != "mp3" || c.TTS.APIKey.Value() != "sk-speech" {
		t.Errorf("tts = %+v, want the file's base_url and the environment's voice, format and key", c.TTS)
	}
	if c.Image.BaseURL != "http://images.local/v1" || c.Image.Size != "1792x1024" || c.Image.Model != "dall-e-3" {
		t.Errorf("image = %+v, want the environment's base_url and size, the default model", c.Image)
	}
	_, err = Load(path, envMap(map[string]string{"TROUPE_IMAGE_SIZE": "big"}))
	if err == nil || !strings.Contains(err.Error(), "image.size") {
		t.Errorf("a bad TROUPE_IMAGE_SIZE: got %v, want an error naming image.size", err)
	}
}

// tts and image borrow the main model's key only on its server.
func TestOutboundMediaKeys(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Model.APIKey = "sk-main"
	c.TTS.BaseURL = "https://api.openai.com/v1"
	c.Image.BaseURL = "http://127.0.0.1:7860/v1"
	if got := c.SpeechEndpoint().APIKey.Value(); got != "sk-main" {
		t.Errorf("tts on the main model's server sends %q, want its key", got)
	}
	if got := c.ImageEndpoint().APIKey.Value(); got != "" {
		t.Errorf("image on another server sends %q, want no key", got)
	}
	if got := strings.Join(c.KeylessSideEndpoints(), ","); !strings.Contains(got, "image") || strings.Contains(got, "tts") {
		t.Errorf("keyless side endpoints = %q, want image and not tts", got)
	}
	c.Image.APIKey = "sk-image"
	if got := c.ImageEndpoint().APIKey.Value(); got != "sk-image" {
		t.Errorf("image's own key: got %q", got)
	}
}
