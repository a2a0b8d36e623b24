package media

import (
	"image"
	"math"
	"testing"

	"golang.org/x/image/draw"
)

// areaAverage is the exact reduction of src to w×h: each output pixel is
// the mean of the source area it covers, fractional edges weighted. It is
// the reference the scalers are measured against.
func areaAverage(src *image.RGBA, w, h int) [][3]float64 {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	weights := func(n, dn int) [][]struct {
		i int
		w float64
	} {
		s := float64(n) / float64(dn)
		out := make([][]struct {
			i int
			w float64
		}, dn)
		for d := range dn {
			lo, hi := float64(d)*s, float64(d+1)*s
			for i := int(lo); i < n && float64(i) < hi; i++ {
				w := math.Min(hi, float64(i+1)) - math.Max(lo, float64(i))
				if w > 0 {
					out[d] = append(out[d], struct {
						i int
						w float64
					}{i, w / s})
				}
			}
		}
		return out
	}
	wx, wy := weights(sw, w), weights(sh, h)
	rows := make([][3]float64, w*sh)
	for y := range sh {
		for x := range w {
			var c [3]float64
			for _, e := range wx[x] {
				p := src.PixOffset(e.i, y)
				for k := range 3 {
					c[k] += e.w * float64(src.Pix[p+k])
				}
			}
			rows[y*w+x] = c
		}
	}
	out := make([][3]float64, w*h)
	for y := range h {
		for x := range w {
			var c [3]float64
			for _, e := range wy[y] {
				for k := range 3 {
					c[k] += e.w * rows[e.i*w+x][k]
				}
			}
			out[y*w+x] = c
		}
	}
	return out
}

func psnr(ref [][3]float64, m *image.RGBA) float64 {
	var se float64
	w := m.Rect.Dx()
	for i, c := range ref {
		p := m.PixOffset(i%w, i/w)
		for k := range 3 {
			d := c[k] - float64(m.Pix[p+k])
			se += d * d
		}
	}
	mse := se / float64(3*len(ref))
	return 10 * math.Log10(255*255/mse)
}

// fine is a worst case for aliasing: stripes one and two pixels wide and
// a zone plate, over the photo's noise.
func fine(w, h int) *image.RGBA {
	m := photo(w, h, 7)
	for y := range h {
		for x := range w {
			p := m.PixOffset(x, y)
			if (x/1+y/2)%2 == 0 && x < w/2 {
				m.Pix[p], m.Pix[p+1], m.Pix[p+2] = 0, 0, 0
			}
			if x >= w/2 {
				r := float64((x-w*3/4)*(x-w*3/4)+(y-h/2)*(y-h/2)) / float64(w)
				v := uint8(127.5 + 127.5*math.Cos(r*math.Pi))
				m.Pix[p], m.Pix[p+1], m.Pix[p+2] = v, v, v
			}
		}
	}
	return m
}

// resizeWith is the scalers PrepareImage chose between: optional halving
// steps, then one x/image/draw interpolator.
func resizeWith(img image.Image, w, h int, halve bool, final draw.Interpolator) *image.RGBA {
	src, sr := img, img.Bounds()
	for halve && sr.Dx() >= 2*w && sr.Dy() >= 2*h {
		half := image.NewRGBA(image.Rect(0, 0, sr.Dx()/2, sr.Dy()/2))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), src, sr, draw.Src, nil)
		src, sr = half, half.Bounds()
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	final.Scale(dst, dst.Bounds(), src, sr, draw.Src, nil)
	return dst
}

// TestResizeQuality holds PrepareImage's scaler against the exact area
// average (in float64) of a worst case for aliasing: it must match it up
// to rounding, and so beat the x/image/draw scalers it was chosen over.
// The figures (PSNR in dB, with -v) are what chose it; see resize.
func TestResizeQuality(t *testing.T) {
	t.Parallel()
	src := fine(2000, 1500)
	w, h := 512, 384 // factor 3.9, like 4000×3000 to 1024×768
	ref := areaAverage(src, w, h)
	score := func(halve bool, final draw.Interpolator) float64 {
		return psnr(ref, resizeWith(src, w, h, halve, final))
	}
	chosen := psnr(ref, resize(src, w, h, nil))
	direct := score(false, draw.ApproxBiLinear)
	halveABL := score(true, draw.ApproxBiLinear)
	catmull := score(false, draw.CatmullRom)
	halveCatmull := score(true, draw.CatmullRom)
	t.Logf("PSNR against the area average: chosen (area average by rows) %.1f dB; ApproxBiLinear %.1f dB; halving + ApproxBiLinear %.1f dB; CatmullRom %.1f dB; halving + CatmullRom %.1f dB",
		chosen, direct, halveABL, catmull, halveCatmull)
	// Rounding to 8 bits alone leaves about 59 dB.
	if chosen < 50 {
		t.Errorf("chosen scaler scores %.1f dB against the area average, want >= 50 dB", chosen)
	}
}
