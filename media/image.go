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

	b := img.Bounds()
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

// resize scales img to w×h on white. Large reductions go in halving steps
// first: ApproxBiLinear at exactly half size averages each 2×2 block, a
// box filter that is cheap and free of aliasing; the last step (a factor
// under 2) is ApproxBiLinear too. CatmullRom looks no better after the
// halving and allocates a float64 buffer of w × source height × 32 bytes
// (98 MB for a 4000×3000 photo), see BenchmarkPrepareImage and
// TestResizeQuality.
func resize(img image.Image, w, h int, st *imageStats) *image.RGBA {
	return resizeWith(img, w, h, true, draw.ApproxBiLinear, st)
}

func resizeWith(img image.Image, w, h int, halve bool, final draw.Interpolator, st *imageStats) *image.RGBA {
	src, sr := img, img.Bounds()
	var held int64
	for halve && sr.Dx() >= 2*w && sr.Dy() >= 2*h {
		half := image.NewRGBA(image.Rect(0, 0, sr.Dx()/2, sr.Dy()/2))
		st.hold(int64(len(half.Pix)))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), src, sr, draw.Src, nil)
		st.drop(held)
		src, sr, held = half, half.Bounds(), int64(len(half.Pix))
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	st.hold(int64(len(dst.Pix)))
	op := draw.Src
	if !opaque(src) {
		for i := range dst.Pix {
			dst.Pix[i] = 0xff
		}
		op = draw.Over
	}
	if sr.Dx() == w && sr.Dy() == h {
		draw.Draw(dst, dst.Bounds(), src, sr.Min, op)
	} else {
		if _, ok := final.(*draw.Kernel); ok {
			// The kernel scaler's float64 buffer: w × source height × 32.
			st.hold(int64(w) * int64(sr.Dy()) * 32)
			defer st.drop(int64(w) * int64(sr.Dy()) * 32)
		}
		final.Scale(dst, dst.Bounds(), src, sr, op, nil)
	}
	st.drop(held)
	return dst
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
