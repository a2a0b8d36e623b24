package openaitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // the formats a vision model takes
	_ "image/jpeg"
	"image/png"
	"strings"

	_ "golang.org/x/image/webp"
)

// maxImageBytes is the largest picture OpenAI takes in an image part.
const maxImageBytes = 20 << 20

// maxImagePixels refuses a picture whose header claims more pixels than
// any test sends, before decoding it.
const maxImagePixels = 50_000_000

// Image is one image part of a chat request, as the fake saw it.
type Image struct {
	// MIME is the data URL's media type: image/png, image/jpeg, image/gif
	// or image/webp.
	MIME string
	// Width and Height are the decoded picture's size in pixels.
	Width, Height int
	// Color is the picture's dominant colour: red, orange, yellow, green,
	// blue, purple, white, grey or black.
	Color string
	// Detail is the part's image_url.detail ("" when absent).
	Detail string
	// Caption is what the fake says the picture shows: the function
	// SetCaption set, else Describe.
	Caption string
}

// Describe is the default caption of an image: "a 640x480 picture,
// mostly red".
func Describe(img Image) string {
	return fmt.Sprintf("a %dx%d picture, mostly %s", img.Width, img.Height, img.Color)
}

// SetCaption sets what the fake says an image shows (recorded as
// Image.Caption, and what DefaultResponder describes), so that a test
// scripts the captions of its pictures; nil restores Describe.
func (s *Server) SetCaption(f func(Image) string) {
	if f == nil {
		f = Describe
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caption = f
}

// invalidRequest is a request the fake refuses with HTTP 400
// invalid_request_error; its text is what OpenAI would say.
type invalidRequest struct{ msg string }

func (e *invalidRequest) Error() string { return e.msg }

// invalid returns an *invalidRequest of the formatted message.
func invalid(format string, args ...any) error {
	return &invalidRequest{msg: fmt.Sprintf(format, args...)}
}

// contentPart is one element of a message content given as an array.
type contentPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// messageContent decodes a message's content: a string, null, or an array
// of text and image_url parts, whose text parts are joined. Each image part
// must be a data URL of a PNG, JPEG, GIF or WebP picture that decodes, on a
// user message; caption names what each shows. It fails as OpenAI does on
// a part it does not take.
func messageContent(role string, raw json.RawMessage, caption func(Image) string) (string, []Image, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return "", nil, nil // null, absent: no text
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, invalid("Invalid content: expected an array of content parts: %v", err)
	}
	var b strings.Builder
	var images []Image
	for i, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == nil {
				return "", nil, invalid("Missing required parameter: 'content[%d].text'.", i)
			}
			b.WriteString(*p.Text)
		case "image_url":
			if role != "user" {
				return "", nil, invalid("Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", role)
			}
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return "", nil, invalid("Missing required parameter: 'content[%d].image_url.url'.", i)
			}
			switch p.ImageURL.Detail {
			case "", "auto", "low", "high":
			default:
				return "", nil, invalid("Invalid value for 'content[%d].image_url.detail': %q.", i, p.ImageURL.Detail)
			}
			img, err := dataImage(p.ImageURL.URL)
			if err != nil {
				return "", nil, invalid("Invalid image in 'content[%d].image_url.url': %v", i, err)
			}
			img.Detail = p.ImageURL.Detail
			img.Caption = caption(img)
			images = append(images, img)
		default:
			return "", nil, invalid("Invalid value for 'content[%d].type': %q. Supported values are: 'text' and 'image_url'.", i, p.Type)
		}
	}
	return b.String(), images, nil
}

// imageFormats maps a data URL's media type to the format name the image
// package decodes it as.
var imageFormats = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpeg",
	"image/gif":  "gif",
	"image/webp": "webp",
}

// dataImage decodes a data URL of a picture: data:<type>;base64,<bytes>,
// whose bytes must be the format its type names.
func dataImage(url string) (Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return Image{}, errors.New("the fake takes only data URLs (data:image/png;base64,...)")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	mimeType, enc, _ := strings.Cut(meta, ";")
	if !ok || enc != "base64" {
		return Image{}, errors.New("not a base64 data URL")
	}
	format, ok := imageFormats[strings.ToLower(mimeType)]
	if !ok {
		return Image{}, fmt.Errorf("unsupported image type %q: use image/png, image/jpeg, image/gif or image/webp", mimeType)
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > maxImageBytes {
		return Image{}, fmt.Errorf("image over %d MB", maxImageBytes>>20)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return Image{}, fmt.Errorf("bad base64: %v", err)
	}
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	switch {
	case err != nil:
		return Image{}, fmt.Errorf("not a picture: %v", err)
	case got != format:
		return Image{}, fmt.Errorf("the data URL says %s but holds %s", mimeType, got)
	case cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxImagePixels:
		return Image{}, fmt.Errorf("picture of %dx%d pixels", cfg.Width, cfg.Height)
	}
	m, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("picture does not decode: %v", err)
	}
	return Image{MIME: strings.ToLower(mimeType), Width: cfg.Width, Height: cfg.Height, Color: DominantColor(m)}, nil
}

// palette is the colours the fake tells apart, in the order ties go, with
// the shade Picture paints of each.
var palette = []struct {
	name string
	rgb  color.RGBA
}{
	{"red", color.RGBA{220, 30, 30, 255}},
	{"orange", color.RGBA{245, 140, 20, 255}},
	{"yellow", color.RGBA{240, 220, 40, 255}},
	{"green", color.RGBA{30, 160, 60, 255}},
	{"blue", color.RGBA{30, 60, 200, 255}},
	{"purple", color.RGBA{130, 50, 170, 255}},
	{"white", color.RGBA{245, 245, 245, 255}},
	{"grey", color.RGBA{128, 128, 128, 255}},
	{"black", color.RGBA{15, 15, 15, 255}},
}

// DominantColor returns the name of the colour most of m's pixels are
// nearest to: red, orange, yellow, green, blue, purple, white, grey or
// black. It samples at most 128x128 pixels; transparent ones do not count,
// and a picture with no opaque pixel is grey.
func DominantColor(m image.Image) string {
	b := m.Bounds()
	stepX, stepY := max(b.Dx()/128, 1), max(b.Dy()/128, 1)
	counts := make(map[string]int, len(palette))
	for y := b.Min.Y; y < b.Max.Y; y += stepY {
		for x := b.Min.X; x < b.Max.X; x += stepX {
			if name, ok := ColorName(m.At(x, y)); ok {
				counts[name]++
			}
		}
	}
	best, most := "grey", 0
	for _, p := range palette {
		if counts[p.name] > most {
			best, most = p.name, counts[p.name]
		}
	}
	return best
}

// ColorName names the palette colour c is nearest to by hue, saturation
// and brightness; ok is false for a transparent colour.
func ColorName(c color.Color) (name string, ok bool) {
	r16, g16, b16, a16 := c.RGBA()
	if a16 == 0 {
		return "", false
	}
	// Undo the alpha premultiplication, to 0..1.
	r, g, b := float64(r16)/float64(a16), float64(g16)/float64(a16), float64(b16)/float64(a16)
	hi, lo := max(r, g, b), min(r, g, b)
	v, s := hi, 0.0
	if hi > 0 {
		s = (hi - lo) / hi
	}
	switch {
	case v < 0.2:
		return "black", true
	case s < 0.2 && v > 0.8:
		return "white", true
	case s < 0.2:
		return "grey", true
	}
	var h float64
	switch d := hi - lo; hi {
	case r:
		h = 60 * (g - b) / d
	case g:
		h = 60 * ((b-r)/d + 2)
	default:
		h = 60 * ((r-g)/d + 4)
	}
	if h < 0 {
		h += 360
	}
	switch {
	case h < 15 || h >= 330:
		return "red", true
	case h < 45:
		return "orange", true
	case h < 70:
		return "yellow", true
	case h < 170:
		return "green", true
	case h < 260:
		return "blue", true
	}
	return "purple", true
}

// Picture returns a PNG of width x height pixels of one colour of the
// palette, by name (red, orange, yellow, green, blue, purple, white, grey,
// black; any other name is grey): what the fake paints, and a picture a
// test can send whose DominantColor is known.
func Picture(name string, width, height int) []byte {
	c := palette[7].rgb
	for _, p := range palette {
		if p.name == name {
			c = p.rgb
		}
	}
	m := image.NewPaletted(image.Rect(0, 0, width, height), color.Palette{c})
	var buf bytes.Buffer
	_ = png.Encode(&buf, m) // writing to memory does not fail
	return buf.Bytes()
}
