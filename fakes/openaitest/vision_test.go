package openaitest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
	"testing"

	oai "github.com/sashabaranov/go-openai"

	"troupe/fakes/openaitest"
)

// dataURL returns data as a data URL of mimeType.
func dataURL(mimeType string, data []byte) string {
	return "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// solid returns a w x h picture of colour c.
func solid(w, h int, c color.Color) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Bounds(), &image.Uniform{C: c}, image.Point{}, draw.Src)
	return m
}

func jpegOf(t *testing.T, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gifOf(t *testing.T, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bitWriter writes bits least significant first, as VP8L reads them.
type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

func (b *bitWriter) write(v uint64, n uint) {
	b.acc |= v << b.nacc
	b.nacc += n
	for b.nacc >= 8 {
		b.buf = append(b.buf, byte(b.acc))
		b.acc >>= 8
		b.nacc -= 8
	}
}

// webpOf returns a lossless WebP of w x h pixels of c: no transforms, and
// every prefix code a single symbol, so each pixel takes no bits (the
// standard library encodes no WebP, and x/image only decodes it).
func webpOf(w, h int, c color.RGBA) []byte {
	var bw bitWriter
	bw.write(0x2f, 8) // VP8L signature
	bw.write(uint64(w-1), 14)
	bw.write(uint64(h-1), 14)
	bw.write(0, 1+3+1+1+1) // no alpha hint, version 0, no transform, no colour cache, no meta codes
	for _, sym := range []uint8{c.G, c.R, c.B, c.A} {
		bw.write(1, 1) // a simple code
		bw.write(0, 1) // of one symbol
		bw.write(1, 1) // of 8 bits
		bw.write(uint64(sym), 8)
	}
	bw.write(0b0001, 4) // distance: simple, one symbol, 1 bit, 0
	if bw.nacc > 0 {
		bw.buf = append(bw.buf, byte(bw.acc))
	}
	n := len(bw.buf)
	if n%2 == 1 {
		bw.buf = append(bw.buf, 0)
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	_ = binary.Write(&out, binary.LittleEndian, uint32(4+8+len(bw.buf)))
	out.WriteString("WEBPVP8L")
	_ = binary.Write(&out, binary.LittleEndian, uint32(n))
	out.Write(bw.buf)
	return out.Bytes()
}

func TestChatImagePartsAreRecorded(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	mostlyRed := solid(64, 48, color.RGBA{255, 0, 0, 255})
	draw.Draw(mostlyRed, image.Rect(0, 0, 64, 10), &image.Uniform{C: color.RGBA{0, 0, 255, 255}}, image.Point{}, draw.Src)
	var redPNG bytes.Buffer
	_ = png.Encode(&redPNG, mostlyRed)
	parts := []oai.ChatMessagePart{
		{Type: oai.ChatMessagePartTypeText, Text: "What do you see?"},
		{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{URL: dataURL("image/png", redPNG.Bytes()), Detail: oai.ImageURLDetailAuto}},
		{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{URL: dataURL("image/jpeg", jpegOf(t, solid(30, 20, color.RGBA{245, 140, 20, 255}))), Detail: oai.ImageURLDetailLow}},
		{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{URL: dataURL("image/gif", gifOf(t, solid(8, 8, color.RGBA{0, 200, 0, 255})))}},
		{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{URL: dataURL("image/webp", webpOf(12, 9, color.RGBA{130, 50, 170, 255}))}},
	}
	resp, err := client(s).CreateChatCompletion(t.Context(), oai.ChatCompletionRequest{
		Model: "m",
		Messages: []oai.ChatCompletionMessage{
			{Role: "system", Content: "You see."},
			{Role: "user", MultiContent: parts},
		},
	})
	if err != nil {
		t.Fatalf("CreateChatCompletion: %v", err)
	}
	got, _ := s.Last()
	want := []openaitest.Image{
		{MIME: "image/png", Width: 64, Height: 48, Color: "red", Detail: "auto", Caption: "a 64x48 picture, mostly red"},
		{MIME: "image/jpeg", Width: 30, Height: 20, Color: "orange", Detail: "low", Caption: "a 30x20 picture, mostly orange"},
		{MIME: "image/gif", Width: 8, Height: 8, Color: "green", Caption: "a 8x8 picture, mostly green"},
		{MIME: "image/webp", Width: 12, Height: 9, Color: "purple", Caption: "a 12x9 picture, mostly purple"},
	}
	if len(got.Images) != len(want) {
		t.Fatalf("got %d images %+v, want %d", len(got.Images), got.Images, len(want))
	}
	for i := range want {
		if got.Images[i] != want[i] {
			t.Errorf("image %d: got %+v, want %+v", i, got.Images[i], want[i])
		}
	}
	if got.Messages[1].Content != "What do you see?" || got.Messages[0].Content != "You see." {
		t.Errorf("got messages %+v, want the text part as the user's content", got.Messages)
	}
	answer := resp.Choices[0].Message.Content
	for _, w := range want {
		if !strings.Contains(answer, w.Caption) {
			t.Errorf("got answer %q, want it to describe %q", answer, w.Caption)
		}
	}
	if !strings.Contains(answer, `You said "What do you see?"`) {
		t.Errorf("got answer %q, want it to quote the text", answer)
	}
}

func TestSetCaptionScriptsWhatImagesShow(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.SetCaption(func(img openaitest.Image) string { return "a lighthouse at dusk (" + img.Color + ")" })
	resp, err := client(s).CreateChatCompletion(t.Context(), oai.ChatCompletionRequest{
		Model: "m",
		Messages: []oai.ChatCompletionMessage{{Role: "user", MultiContent: []oai.ChatMessagePart{
			{Type: oai.ChatMessagePartTypeImageURL, ImageURL: &oai.ChatMessageImageURL{URL: dataURL("image/png", openaitest.Picture("blue", 5, 5))}},
		}}},
	})
	if err != nil {
		t.Fatalf("CreateChatCompletion: %v", err)
	}
	if got, want := resp.Choices[0].Message.Content, "reply 1: I see a lighthouse at dusk (blue)."; got != want {
		t.Errorf("got answer %q, want %q", got, want)
	}
	s.SetCaption(nil)
	if got := openaitest.Describe(openaitest.Image{Width: 2, Height: 3, Color: "grey"}); got != "a 2x3 picture, mostly grey" {
		t.Errorf("got Describe %q", got)
	}
}

func TestChatImagePartsRefused(t *testing.T) {
	t.Parallel()
	pic := openaitest.Picture("red", 4, 4)
	part := func(url string) string {
		return `{"type":"image_url","image_url":{"url":` + jsonString(url) + `}}`
	}
	tests := []struct {
		name, role, content, want string
	}{
		{"unknown part type", "user", `[{"type":"input_audio","input_audio":{"data":"", "format":"wav"}}]`, "content[0].type"},
		{"text part without text", "user", `[{"type":"text"}]`, "content[0].text"},
		{"image without url", "user", `[{"type":"image_url","image_url":{}}]`, "image_url.url"},
		{"image in a system message", "system", `[` + part(dataURL("image/png", pic)) + `]`, "role 'user'"},
		{"remote url", "user", `[` + part("https://example.com/cat.png") + `]`, "only data URLs"},
		{"not base64", "user", `[` + part("data:image/png,rawbytes") + `]`, "base64"},
		{"unsupported type", "user", `[` + part(dataURL("image/bmp", pic)) + `]`, "image/bmp"},
		{"broken base64", "user", `[` + part("data:image/png;base64,!!!") + `]`, "base64"},
		{"not a picture", "user", `[` + part(dataURL("image/png", []byte("not a picture at all"))) + `]`, "not a picture"},
		{"type and bytes differ", "user", `[` + part(dataURL("image/jpeg", pic)) + `]`, "holds png"},
		{"bad detail", "user", `[{"type":"image_url","image_url":{"url":` + jsonString(dataURL("image/png", pic)) + `,"detail":"huge"}}]`, "detail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Script(openaitest.Answer{Text: "scripted"})
			body := `{"model":"m","messages":[{"role":"` + tt.role + `","content":` + tt.content + `}]}`
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct {
					Message, Type string
				}
			}
			_ = json.NewDecoder(resp.Body).Decode(&e)
			if resp.StatusCode != http.StatusBadRequest || e.Error.Type != "invalid_request_error" {
				t.Errorf("got %d %+v, want 400 invalid_request_error", resp.StatusCode, e)
			}
			if !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("got message %q, want it to name %q", e.Error.Message, tt.want)
			}
			// The refusal does not use up the scripted answer.
			ok, err := client(s).CreateChatCompletion(t.Context(), oai.ChatCompletionRequest{Model: "m", Messages: []oai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
			if err != nil || ok.Choices[0].Message.Content != "scripted" {
				t.Errorf("got %v, %v after the refusal, want the scripted answer", ok, err)
			}
		})
	}
}

func TestDominantColor(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"red", "orange", "yellow", "green", "blue", "purple", "white", "grey", "black"} {
		m, _, err := image.Decode(bytes.NewReader(openaitest.Picture(name, 40, 30)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := openaitest.DominantColor(m); got != name {
			t.Errorf("Picture(%q): got dominant colour %q", name, got)
		}
	}
	tests := []struct {
		c    color.Color
		want string
	}{
		{color.RGBA{255, 0, 0, 255}, "red"},
		{color.RGBA{0, 255, 0, 255}, "green"},
		{color.RGBA{0, 0, 255, 255}, "blue"},
		{color.RGBA{255, 255, 0, 255}, "yellow"},
		{color.RGBA{255, 255, 255, 255}, "white"},
		{color.RGBA{0, 0, 0, 255}, "black"},
		{color.RGBA{60, 60, 60, 255}, "grey"},
		{color.NRGBA{255, 0, 0, 128}, "red"}, // half transparent: still red
	}
	for _, tt := range tests {
		if got, _ := openaitest.ColorName(tt.c); got != tt.want {
			t.Errorf("ColorName(%v): got %q, want %q", tt.c, got, tt.want)
		}
	}
	// Transparent pixels do not count: a mostly transparent picture
	// with a blue corner is blue.
	m := image.NewNRGBA(image.Rect(0, 0, 20, 20))
	draw.Draw(m, image.Rect(0, 0, 5, 5), &image.Uniform{C: color.RGBA{0, 0, 255, 255}}, image.Point{}, draw.Src)
	if got := openaitest.DominantColor(m); got != "blue" {
		t.Errorf("got %q for a transparent picture with a blue corner, want blue", got)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
