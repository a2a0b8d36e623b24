package media

import (
	"bytes"
	"compress/lzw"
	"encoding/base64"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// photo is a w×h image that looks like a photograph to an encoder:
// smooth gradients under fine noise, so it does not compress to nothing.
func photo(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := r.IntN(48) - 24
			i := m.PixOffset(x, y)
			m.Pix[i+0] = clamp8(x*255/w + n)
			m.Pix[i+1] = clamp8(y*255/h + n)
			m.Pix[i+2] = clamp8(128 + int(100*math.Sin(float64(x+y)/40)) + n)
			m.Pix[i+3] = 0xff
		}
	}
	return m
}

func clamp8(v int) uint8 { return uint8(min(255, max(0, v))) }

func uniform(w, h int, c color.Color) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, c)
		}
	}
	return m
}

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyWebP is a 1×1 lossless WebP holding one fully transparent pixel.
var tinyWebP, _ = base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")

// decodePicture decodes what PrepareImage made, checking that its MIME,
// size and bytes agree.
func decodePicture(t *testing.T, p Picture) image.Image {
	t.Helper()
	m, format, err := image.Decode(bytes.NewReader(p.Data))
	if err != nil {
		t.Fatalf("picture does not decode: %v", err)
	}
	if "image/"+format != p.MIME {
		t.Errorf("MIME %s, but the bytes are %s", p.MIME, format)
	}
	if b := m.Bounds(); b.Dx() != p.Width || b.Dy() != p.Height {
		t.Errorf("picture says %dx%d, bytes are %dx%d", p.Width, p.Height, b.Dx(), b.Dy())
	}
	return m
}

func near(c color.Color, r, g, b uint8) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { return math.Abs(float64(a>>8)-float64(b)) <= 12 }
	return d(cr, r) && d(cg, g) && d(cb, b)
}

func TestPrepareImage(t *testing.T) {
	t.Parallel()
	bigPhoto := encodeJPEG(t, photo(2000, 1000, 1), 90)
	tallPNG := encodePNG(t, photo(300, 1200, 2))
	smallPNG := encodePNG(t, uniform(200, 100, color.NRGBA{0, 0, 255, 255}))
	smallJPEG := encodeJPEG(t, photo(320, 240, 3), 80)
	transparent := encodePNG(t, uniform(64, 64, color.NRGBA{0, 0, 0, 0}))
	halfRed := encodePNG(t, uniform(64, 64, color.NRGBA{255, 0, 0, 128}))
	pal := image.NewPaletted(image.Rect(0, 0, 40, 30), color.Palette{color.RGBA{0, 255, 0, 255}, color.Transparent})
	for y := range 30 {
		for x := range 20 {
			pal.SetColorIndex(x, y, 1) // the left half transparent
		}
	}
	gifData := encodeGIF(t, pal)
	// From golang.org/x/image's own testdata (150×103, lossy VP8), read
	// where the module is, so the repository holds no copy of it.
	lossyWebP := xImageTestdata(t, "video-001.lossy.webp")

	tests := []struct {
		name          string
		data          []byte
		maxSide       int
		mime          string
		width, height int
		corner        [3]uint8 // the expected colour at (0, 0), when set
		same          bool     // passed through unchanged
	}{
		{"big photo scaled to 1024", bigPhoto, 0, "image/jpeg", 1024, 512, [3]uint8{}, false},
		{"tall PNG to 512", tallPNG, 512, "image/jpeg", 128, 512, [3]uint8{}, false},
		{"small plain PNG passes", smallPNG, 0, "image/png", 200, 100, [3]uint8{0, 0, 255}, true},
		{"small plain JPEG passes", smallJPEG, 1024, "image/jpeg", 320, 240, [3]uint8{}, true},
		{"small JPEG over maxSide scaled", smallJPEG, 160, "image/jpeg", 160, 120, [3]uint8{}, false},
		{"transparent on white", transparent, 0, "image/jpeg", 64, 64, [3]uint8{255, 255, 255}, false},
		{"half red on white", halfRed, 0, "image/jpeg", 64, 64, [3]uint8{255, 127, 127}, false},
		{"GIF first frame on white", gifData, 0, "image/jpeg", 40, 30, [3]uint8{255, 255, 255}, false},
		{"transparent WebP on white", tinyWebP, 0, "image/jpeg", 1, 1, [3]uint8{255, 255, 255}, false},
		{"lossy WebP", lossyWebP, 100, "image/jpeg", 100, 69, [3]uint8{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := PrepareImage(tt.data, tt.maxSide)
			if err != nil {
				t.Fatalf("PrepareImage: %v", err)
			}
			if p.MIME != tt.mime || p.Width != tt.width || p.Height != tt.height {
				t.Fatalf("got %s %dx%d, want %s %dx%d", p.MIME, p.Width, p.Height, tt.mime, tt.width, tt.height)
			}
			if got := bytes.Equal(p.Data, tt.data); got != tt.same {
				t.Errorf("passed through unchanged: %v, want %v", got, tt.same)
			}
			m := decodePicture(t, p)
			if tt.corner != [3]uint8{} && !near(m.At(0, 0), tt.corner[0], tt.corner[1], tt.corner[2]) {
				t.Errorf("colour at (0,0) = %v, want about %v", m.At(0, 0), tt.corner)
			}
			if !strings.HasPrefix(p.DataURL(), "data:"+tt.mime+";base64,") {
				t.Errorf("DataURL = %.40s…", p.DataURL())
			}
		})
	}
}

func TestPrepareImageRefuses(t *testing.T) {
	t.Parallel()
	good := encodePNG(t, uniform(8, 8, color.White))
	truncated := encodeJPEG(t, photo(64, 64, 4), 80)
	truncated = truncated[:len(truncated)/2]
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"text", []byte("hello, this is not a picture"), ErrMalformed},
		{"BMP", append([]byte("BM"), make([]byte, 60)...), ErrMalformed},
		{"bad PNG header", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 30)...), ErrMalformed},
		{"PNG cut off", good[:len(good)-20], ErrMalformed},
		{"JPEG cut off", truncated, ErrMalformed},
		{"PNG bomb 20000x20000", pngHeader(20000, 20000), ErrTooLarge},
		{"PNG side over 16384", pngHeader(16385, 10), ErrTooLarge},
		{"PNG 8000x8000 over 50 MP", pngHeader(8000, 8000), ErrTooLarge},
		{"GIF bomb", gifHeader(65535, 65535), ErrTooLarge},
		{"JPEG bomb", jpegHeader(60000, 60000), ErrTooLarge},
		{"GIF whose frame is 4x0", gifEmptyFrame(), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := PrepareImage(tt.data, 0)
			if !errors.Is(err, tt.want) {
				t.Fatalf("PrepareImage = %v, want %v", err, tt.want)
			}
			if err.Error() == tt.want.Error() {
				t.Errorf("error %q gives no reason", err)
			}
		})
	}
}

// pngHeader is a PNG signature and IHDR claiming w×h, with no pixels.
func pngHeader(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := []byte{0, 0, 0, 13, 'I', 'H', 'D', 'R',
		byte(w >> 24), byte(w >> 16), byte(w >> 8), byte(w),
		byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h),
		8, 6, 0, 0, 0}
	b.Write(ihdr)
	crc := crc32IEEE(ihdr[4:])
	b.Write([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	return b.Bytes()
}

func gifHeader(w, h int) []byte {
	return []byte{'G', 'I', 'F', '8', '9', 'a', byte(w), byte(w >> 8), byte(h), byte(h >> 8), 0, 0, 0, ';'}
}

// gifEmptyFrame is a GIF whose 4x4 screen holds one 4x0 frame: its
// header reads as 4x4, its picture decodes to nothing.
func gifEmptyFrame() []byte {
	var lz bytes.Buffer
	if err := lzw.NewWriter(&lz, lzw.LSB, 2).Close(); err != nil {
		panic(err)
	}
	b := []byte("GIF89a")
	b = append(b, 4, 0, 4, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255) // screen, 2-colour table
	b = append(b, ',', 0, 0, 0, 0, 4, 0, 0, 0, 0)                 // frame at 0,0 of 4x0
	b = append(b, 2, byte(lz.Len()))
	b = append(b, lz.Bytes()...)
	return append(b, 0, ';')
}

// jpegHeader is a JPEG whose frame header claims w×h.
func jpegHeader(w, h int) []byte {
	b := []byte{0xff, 0xd8,
		0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
		0xff, 0xdb, 0, 67, 0} // a quantization table of 64 ones
	b = append(b, bytes.Repeat([]byte{1}, 64)...)
	return append(b,
		0xff, 0xc0, 0, 11, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 1, 1, 0x11, 0,
		0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0,
		0xff, 0xd9)
}

func TestFit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ w, h, max, ww, wh int }{
		{4000, 3000, 1024, 1024, 768},
		{3000, 4000, 1024, 768, 1024},
		{1024, 1024, 1024, 1024, 1024},
		{100, 50, 1024, 100, 50},
		{10000, 1, 1024, 1024, 1},
		{1, 10000, 1024, 1, 1024},
		{1025, 3, 1024, 1024, 3},
	} {
		if w, h := fit(tt.w, tt.h, tt.max); w != tt.ww || h != tt.wh {
			t.Errorf("fit(%d, %d, %d) = %dx%d, want %dx%d", tt.w, tt.h, tt.max, w, h, tt.ww, tt.wh)
		}
	}
}

// withEXIF inserts an APP1 EXIF segment with the given orientation after
// a JPEG's start marker.
func withEXIF(jpg []byte, orient uint16) []byte {
	tiff := []byte{'M', 'M', 0, 42, 0, 0, 0, 8, // header, IFD at 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, byte(orient >> 8), byte(orient), 0, 0,
		0, 0, 0, 0} // no next IFD
	seg := append([]byte("Exif\x00\x00"), tiff...)
	n := len(seg) + 2
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xff, 0xe1, byte(n>>8), byte(n))
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// A phone photo taken upright is stored sideways with EXIF orientation 6:
// the picture comes out upright, and the EXIF does not leave.
func TestPrepareImageOrientation(t *testing.T) {
	t.Parallel()
	// 200×100 stored: red on the left half, blue on the right.
	m := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for y := range 100 {
		for x := range 200 {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 100 {
				c = color.RGBA{0, 0, 255, 255}
			}
			m.Set(x, y, c)
		}
	}
	plain := encodeJPEG(t, m, 95)
	for _, tt := range []struct {
		orient        uint16
		width, height int
		top, bottom   [3]uint8
	}{
		{1, 200, 100, [3]uint8{255, 0, 0}, [3]uint8{255, 0, 0}}, // left column red
		{6, 100, 200, [3]uint8{255, 0, 0}, [3]uint8{0, 0, 255}}, // rotated 90° clockwise: red on top
		{8, 100, 200, [3]uint8{0, 0, 255}, [3]uint8{255, 0, 0}}, // counter-clockwise: blue on top
		{3, 200, 100, [3]uint8{0, 0, 255}, [3]uint8{0, 0, 255}}, // 180°: blue on the left
	} {
		data := withEXIF(plain, tt.orient)
		if o, meta := jpegMeta(data); o != int(tt.orient) || !meta {
			t.Fatalf("jpegMeta = %d, %v; want %d, true", o, meta, tt.orient)
		}
		p, err := PrepareImage(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(p.Data, data) || bytes.Contains(p.Data, []byte("Exif")) {
			t.Errorf("orientation %d: EXIF passed on", tt.orient)
		}
		got := decodePicture(t, p)
		if p.Width != tt.width || p.Height != tt.height {
			t.Fatalf("orientation %d: %dx%d, want %dx%d", tt.orient, p.Width, p.Height, tt.width, tt.height)
		}
		if c := got.At(2, 2); !near(c, tt.top[0], tt.top[1], tt.top[2]) {
			t.Errorf("orientation %d: top left %v, want %v", tt.orient, c, tt.top)
		}
		if c := got.At(2, p.Height-3); !near(c, tt.bottom[0], tt.bottom[1], tt.bottom[2]) {
			t.Errorf("orientation %d: bottom left %v, want %v", tt.orient, c, tt.bottom)
		}
	}
}

func TestPlainPNG(t *testing.T) {
	t.Parallel()
	plain := encodePNG(t, uniform(4, 4, color.White))
	// A tEXt chunk before IEND (a comment, a location, a prompt).
	text := append([]byte{}, plain[:len(plain)-12]...)
	chunk := []byte{'t', 'E', 'X', 't', 'a', 0, 'b', 'c'}
	crc := crc32IEEE(chunk)
	text = append(text, 0, 0, 0, 4)
	text = append(text, chunk...)
	text = append(text, byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc))
	text = append(text, plain[len(plain)-12:]...)
	if !plainPNG(plain) {
		t.Error("plainPNG(plain) = false")
	}
	if plainPNG(text) {
		t.Error("plainPNG(with tEXt) = true")
	}
	if plainPNG(append(append([]byte{}, plain...), "trailing"...)) {
		t.Error("plainPNG(with bytes after IEND) = true")
	}
	p, err := PrepareImage(text, 0)
	if err != nil || p.MIME != "image/jpeg" {
		t.Errorf("PNG with text: %s, %v; want re-encoded JPEG", p.MIME, err)
	}
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// xImageTestdata reads a file of golang.org/x/image's testdata folder in the
// module cache (the build has downloaded the module).
func xImageTestdata(t *testing.T, name string) []byte {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/image").Output()
	if err != nil {
		t.Fatalf("find golang.org/x/image: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
