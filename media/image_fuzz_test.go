package media

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"testing"
)

// FuzzPrepareImage feeds PrepareImage anything: it must never panic, and
// either refuse with one of its errors or return a picture that decodes
// to the size it claims, within the side asked for.
func FuzzPrepareImage(f *testing.F) {
	small := uniform(3, 2, color.NRGBA{200, 30, 30, 255})
	f.Add(encodePNG(f, small), 0)
	f.Add(encodePNG(f, uniform(3, 2, color.NRGBA{0, 0, 0, 100})), 2)
	f.Add(encodeJPEG(f, photo(16, 9, 1), 80), 4)
	f.Add(withEXIF(encodeJPEG(f, photo(8, 6, 2), 80), 6), 0)
	pal := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.Transparent})
	f.Add(encodeGIF(f, pal), 0)
	f.Add(tinyWebP, 0)
	f.Add([]byte("not an image at all"), 0)
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 0)
	f.Add(pngHeader(1, 1), 0)
	f.Add(jpegHeader(2, 2), 0)
	f.Add(gifEmptyFrame(), 0)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, data []byte, maxSide int) {
		maxSide %= 64 // keep runs fast: 0 or less means the default
		p, err := PrepareImage(data, maxSide)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("PrepareImage: %v, want ErrMalformed or ErrTooLarge", err)
			}
			return
		}
		limit := maxSide
		if limit <= 0 {
			limit = DefaultMaxSide
		}
		if p.Width < 1 || p.Height < 1 || p.Width > limit || p.Height > limit {
			t.Fatalf("picture %dx%d, want 1..%d a side", p.Width, p.Height, limit)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Data))
		if err != nil || cfg.Width != p.Width || cfg.Height != p.Height {
			t.Fatalf("picture says %dx%d, its bytes: %+v, %v", p.Width, p.Height, cfg, err)
		}
	})
}
