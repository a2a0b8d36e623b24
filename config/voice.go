package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// TTS is an OpenAI-compatible /v1/audio/speech endpoint: where a channel
// turned /voice on, each reply is also sent spoken. Off while BaseURL is
// empty.
type TTS struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
	// Voice is the voice of cards that name none in their extensions
	// (extensions.troupe.voice, else extensions.voice).
	Voice string `yaml:"voice"`
	// Format is the audio asked for: opus (a voice note on Discord and
	// Telegram) or mp3 (an audio file).
	Format string `yaml:"format"`
}

// On reports whether a speech endpoint is configured.
func (t TTS) On() bool { return t.BaseURL != "" }

// Image is an OpenAI-compatible /v1/images/generations endpoint: /picture
// asks it for a picture of the scene. Off while BaseURL is empty.
type Image struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
	// Size is the picture's size, WxH in pixels.
	Size string `yaml:"size"`
}

// On reports whether an image endpoint is configured.
func (i Image) On() bool { return i.BaseURL != "" }

// The defaults of tts and image.
var (
	defaultTTS   = TTS{Model: "tts-1", Voice: "alloy", Format: "opus"}
	defaultImage = Image{Model: "dall-e-3", Size: "1024x1024"}
)

// SpeechEndpoint returns tts with the key it sends: its own, else the main
// model's when it is on the main model's server (see sideKey).
func (c Config) SpeechEndpoint() TTS {
	t := c.TTS
	t.APIKey = c.sideKey(t.BaseURL, t.APIKey)
	return t
}

// ImageEndpoint returns image with the key it sends (see SpeechEndpoint).
func (c Config) ImageEndpoint() Image {
	i := c.Image
	i.APIKey = c.sideKey(i.BaseURL, i.APIKey)
	return i
}

// imageSize is WxH with two whole numbers.
var imageSize = regexp.MustCompile(`^([0-9]{1,5})x([0-9]{1,5})$`)

// The sides a picture may have, in pixels.
const (
	minImageSide = 64
	maxImageSide = 4096
)

// outboundProblems lists the bad values of tts and image.
func (c Config) outboundProblems() []*Error {
	var errs []*Error
	bad := func(key, problem string) { errs = append(errs, &Error{Key: key, Problem: problem}) }
	t, im := c.TTS, c.Image
	if t.BaseURL != "" && !isHTTPURL(t.BaseURL) {
		bad("tts.base_url", fmt.Sprintf("%q must be an http(s) URL such as https://api.openai.com/v1, or empty (replies are not spoken)", t.BaseURL))
	}
	if t.On() && strings.TrimSpace(t.Model) == "" {
		bad("tts.model", "must name a model (such as tts-1) when tts.base_url is set")
	}
	if t.On() && strings.TrimSpace(t.Voice) == "" {
		bad("tts.voice", "must name a voice (such as alloy) when tts.base_url is set; a card's extensions.troupe.voice overrides it")
	}
	if !oneOf(t.Format, "opus", "mp3") {
		bad("tts.format", fmt.Sprintf("%q must be opus (a voice note) or mp3 (an audio file)", t.Format))
	}
	if im.BaseURL != "" && !isHTTPURL(im.BaseURL) {
		bad("image.base_url", fmt.Sprintf("%q must be an http(s) URL such as https://api.openai.com/v1, or empty (no /picture)", im.BaseURL))
	}
	if im.On() && strings.TrimSpace(im.Model) == "" {
		bad("image.model", "must name a model (such as dall-e-3) when image.base_url is set")
	}
	if problem := sizeProblem(im.Size); problem != "" {
		bad("image.size", problem)
	}
	return errs
}

// sizeProblem says what is wrong with a picture size: WxH, each side a
// whole number of pixels from minImageSide to maxImageSide.
func sizeProblem(s string) string {
	m := imageSize.FindStringSubmatch(s)
	if m == nil {
		return fmt.Sprintf("%q must be WIDTHxHEIGHT in pixels, such as 1024x1024", s)
	}
	for _, side := range m[1:] {
		if n, _ := strconv.Atoi(side); n < minImageSide || n > maxImageSide {
			return fmt.Sprintf("%q: each side must be %d to %d pixels", s, minImageSide, maxImageSide)
		}
	}
	return ""
}
