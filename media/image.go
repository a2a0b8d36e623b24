package media

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Bounds of PrepareImage.
const (
	// DefaultMaxSide is the longest side of a prepared picture.
	DefaultMaxSide = 1024
	// maxPixels and maxDecodeSide refuse decompression bombs before a
	// pixel is decoded: a 50-megapixel image already takes 200 MB as RGBA.
	maxPixels     = 50_000_000
	maxDecodeSide = 16384
	// passThroughBytes is the size under which a plain PNG or JPEG that
	// already fits is sent as it came.
	passThroughBytes = 1 << 20
	jpegQuality      = 85
)

// Picture is an image made ready for a vision model: at most the longest
// side asked for, opaque, and in a format every model API takes.
type Picture struct {
	MIME          string
	Data          []byte
	Width, Height int
}

// DataURL is p as a data: URL, the form of an image part in the OpenAI
// chat format.
func (p Picture) DataURL() string {
	return "data:" + p.MIME + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

// PrepareImage turns an attachment's bytes into a Picture whose longest
// side is at most maxSide (DefaultMaxSide when maxSide <= 0). The format
// is told by the bytes, never by a name: PNG, JPEG, GIF (its first frame)
// and WebP. The size is read from the header before anything is decoded,
// and more than 50 megapixels or a side over 16384 is ErrTooLarge; bytes
// that do not decode are ErrMalformed, wrapped with the reason.
//
// The picture is scaled down keeping its aspect ratio (never up), turned
// upright by a JPEG's EXIF orientation, composited on white where it is
// transparent, and encoded as JPEG at quality 85. A PNG or JPEG that
// already fits, is under 1 MB, is opaque and carries no metadata (EXIF,
// XMP, text chunks, an animation) is passed through unchanged with its
// own MIME: re-encoding would only blur it (a screenshot's text), and a
// player's location in EXIF never leaves troupe.
func PrepareImage(data []byte, maxSide int) (Picture, error) {
	return prepareImage(data, maxSide, nil)
}

// imageStats records the buffers PrepareImage holds, for the benchmark's
// figure of memory per image in flight.
type imageStats struct {
	live, peak int64
}

func (s *imageStats) hold(n int64) {
	if s == nil {
		return
	}
	s.live += n
	s.peak = max(s.peak, s.live)
}

func (s *imageStats) drop(n int64) {
	if s != nil {
		s.live -= n
	}
}

func prepareImage(data []byte, maxSide int, st *imageStats) (Picture, error) {
	if maxSide <= 0 {
		maxSide = DefaultMaxSide
	}
	st.hold(int64(len(data)))
	format := sniffImage(data)
	if format == "" {
		return Picture{}, fmt.Errorf("%w: not a PNG, JPEG, GIF or WebP image (%s)", ErrMalformed, http.DetectContentType(data))
	}
	cfg, err := decodeConfig(format, data)
	if err != nil {
		return Picture{}, fmt.Errorf("%w: %s header: %v", ErrMalformed, format, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Picture{}, fmt.Errorf("%w: %s of %dx%d pixels", ErrMalformed, format, cfg.Width, cfg.Height)
	}
	if cfg.Width > maxDecodeSide || cfg.Height > maxDecodeSide || int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return Picture{}, fmt.Errorf("%w: %s of %dx%d pixels", ErrTooLarge, format, cfg.Width, cfg.Height)
	}
	img, err := decodeImage(format, data)
	if err != nil {
		return Picture{}, fmt.Errorf("%w: %s: %v", ErrMalformed, format, err)
	}
	held := pixelBytes(img)
	st.hold(held)
	defer st.drop(held)

	// A GIF's header gives the screen; its first frame may still be empty.
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return Picture{}, fmt.Errorf("%w: %s whose picture is %dx%d pixels", ErrMalformed, format, b.Dx(), b.Dy())
	}
	orient, meta := 1, false
	if format == "jpeg" {
		orient, meta = jpegMeta(data)
	}
	// Target size upright; scaled in the file's own orientation first,
	// turned after, when the image is small.
	uw, uh := b.Dx(), b.Dy()
	if orient >= 5 {
		uw, uh = uh, uw
	}
	tw, th := fit(uw, uh, maxSide)
	if tw == uw && th == uh && len(data) <= passThroughBytes && passThrough(format, data, img, meta) {
		return Picture{MIME: "image/" + format, Data: data, Width: uw, Height: uh}, nil
	}
	sw, sh := tw, th
	if orient >= 5 {
		sw, sh = th, tw
	}
	small := resize(img, sw, sh, st)
	small = orientRGBA(small, orient, st)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, small, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return Picture{}, fmt.Errorf("media: encode JPEG: %w", err)
	}
	st.hold(int64(out.Cap()))
	return Picture{MIME: "image/jpeg", Data: out.Bytes(), Width: tw, Height: th}, nil
}

// sniffImage names the format of data by its first bytes, "" for none of
// the four PrepareImage reads.
func sniffImage(data []byte) string {
	switch http.DetectContentType(data) {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpeg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	}
	return ""
}

func decodeConfig(format string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.DecodeConfig(r)
	case "jpeg":
		return jpeg.DecodeConfig(r)
	case "gif":
		return gif.DecodeConfig(r)
	default:
		return webp.DecodeConfig(r)
	}
}

func decodeImage(format string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.Decode(r)
	case "jpeg":
		return jpeg.Decode(r)
	case "gif":
		return gif.Decode(r)
	default:
		return webp.Decode(r)
	}
}

// fit is w×h scaled down so its longest side is at most maxSide, keeping
// the aspect ratio (rounded, at least 1 pixel); never scaled up.
func fit(w, h, maxSide int) (int, int) {
	if w <= maxSide && h <= maxSide {
		return w, h
	}
	if w >= h {
		return maxSide, max(1, int((int64(h)*int64(maxSide)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(maxSide)+int64(h)/2)/int64(h))), maxSide
}

// passThrough reports whether img, which already fits, may go out as the
// bytes it came in: a plain opaque PNG, or a JPEG in YCbCr or grey with
// no metadata to strip and no orientation to apply.
func passThrough(format string, data []byte, img image.Image, meta bool) bool {
	switch format {
	case "png":
		return plainPNG(data) && opaque(img)
	case "jpeg":
		switch img.(type) {
		case *image.YCbCr, *image.Gray:
			return !meta
		}
	}
	return false
}

func opaque(m image.Image) bool {
	o, ok := m.(interface{ Opaque() bool })
	return ok && o.Opaque()
}

// resize scales img to w×h by an exact area average: each output pixel is
// the mean of the source area it covers (fractional edges weighted),
// composited on white where the source is transparent. The source is read
// one row at a time, converted to premultiplied RGBA by image/draw's fast
// paths, so the scratch is a row of each, whatever the source's size.
//
// Measured against that average on a worst case for aliasing
// (TestResizeQuality, -v): x/image/draw's ApproxBiLinear in one step
// samples 4 of the ~16 pixels under each output pixel and aliases (15
// dB); halving steps with it then one more step, 24 dB; CatmullRom is good
// (31 dB) but allocates w × source height × 32 bytes of scratch, 98 MB
// for a 4000×3000 photo, more than the decoded photo itself.
func resize(img image.Image, w, h int, st *imageStats) *image.RGBA {
	sr := img.Bounds()
	sw, sh := sr.Dx(), sr.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	st.hold(int64(len(dst.Pix)))
	xs, ys := spans(sw, w), spans(sh, h)
	row := image.NewRGBA(image.Rect(0, 0, sw, 1))
	hrow := make([]float32, 4*w) // the source row at rowY, scaled across
	acc := make([]float32, 4*w)
	scratch := int64(len(row.Pix) + 4*len(hrow) + 4*len(acc))
	st.hold(scratch)
	defer st.drop(scratch)
	rowY := -1
	for dy, ry := range ys {
		clear(acc)
		for k, wy := range ry.w {
			if sy := ry.first + k; sy != rowY {
				draw.Draw(row, row.Rect, img, image.Pt(sr.Min.X, sr.Min.Y+sy), draw.Src)
				scaleRow(hrow, row.Pix, xs)
				rowY = sy
			}
			for i, v := range hrow {
				acc[i] += wy * v
			}
		}
		out := dst.Pix[dst.PixOffset(0, dy):]
		for q := 0; q < len(acc); q += 4 {
			white := 255 - acc[q+3]
			out[q] = round8(acc[q] + white)
			out[q+1] = round8(acc[q+1] + white)
			out[q+2] = round8(acc[q+2] + white)
			out[q+3] = 0xff
		}
	}
	return dst
}

// scaleRow sets hrow to the area average of a row of RGBA pixels over xs.
func scaleRow(hrow []float32, pix []uint8, xs []span) {
	for dx, rx := range xs {
		var r, g, b, a float32
		p := 4 * rx.first
		for _, wx := range rx.w {
			r += wx * float32(pix[p])
			g += wx * float32(pix[p+1])
			b += wx * float32(pix[p+2])
			a += wx * float32(pix[p+3])
			p += 4
		}
		q := 4 * dx
		hrow[q], hrow[q+1], hrow[q+2], hrow[q+3] = r, g, b, a
	}
}

// span is the source pixels under one output pixel: from first, with
// weights summing to 1.
type span struct {
	first int
	w     []float32
}

// spans maps n source pixels onto dn output pixels (dn <= n).
func spans(n, dn int) []span {
	out := make([]span, dn)
	s := float64(n) / float64(dn)
	for d := range out {
		lo, hi := float64(d)*s, float64(d+1)*s
		first := int(lo)
		out[d].first = first
		for i := first; i < n && float64(i) < hi; i++ {
			w := min(hi, float64(i+1)) - max(lo, float64(i))
			out[d].w = append(out[d].w, float32(w/s))
		}
	}
	return out
}

func round8(v float32) uint8 {
	return uint8(min(255, max(0, v+0.5)))
}

// pixelBytes is the size of img's pixel buffers.
func pixelBytes(img image.Image) int64 {
	switch m := img.(type) {
	case *image.YCbCr:
		return int64(len(m.Y) + len(m.Cb) + len(m.Cr))
	case *image.NYCbCrA:
		return int64(len(m.Y) + len(m.Cb) + len(m.Cr) + len(m.A))
	case *image.RGBA:
		return int64(len(m.Pix))
	case *image.NRGBA:
		return int64(len(m.Pix))
	case *image.RGBA64:
		return int64(len(m.Pix))
	case *image.NRGBA64:
		return int64(len(m.Pix))
	case *image.Gray:
		return int64(len(m.Pix))
	case *image.Gray16:
		return int64(len(m.Pix))
	case *image.Paletted:
		return int64(len(m.Pix))
	case *image.CMYK:
		return int64(len(m.Pix))
	}
	b := img.Bounds()
	return int64(b.Dx()) * int64(b.Dy()) * 4
}
