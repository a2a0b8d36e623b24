package media

import (
	"testing"
)

// BenchmarkPrepareImage prepares a 4000×3000 photo-like JPEG (a phone
// photo, scaled to 1024×768) and a 1024×768 PNG (it fits, but at 1.7 MB
// of noise it is over the pass-through size, so it is re-encoded).
//
// peak-bytes/img is the memory one image holds in flight at its peak: the
// input bytes, the decoded pixels (YCbCr for a JPEG: 1.5 bytes a pixel at
// 4:2:0; RGBA/NRGBA for a PNG: 4), the scaler's rows and output picture,
// and the encoded result, as prepareImage counts them buffer by buffer
// while it allocates and lets go of them (imageStats). It is computed, not
// sampled from the runtime: runtime.ReadMemStats only shows totals after
// the fact (B/op, the sum of everything allocated, is the upper bound),
// and sampling HeapAlloc mid-call on a shared machine misses the peak.
// The decoders' own small tables (Huffman, zlib window) are left out.
func BenchmarkPrepareImage(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"jpeg-4000x3000", encodeJPEG(b, photo(4000, 3000, 11), 90)},
		{"png-1024x768", encodePNG(b, photo(1024, 768, 12))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var st imageStats
			if _, err := prepareImage(bc.data, 0, &st); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := PrepareImage(bc.data, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.peak), "peak-bytes/img")
			b.ReportMetric(float64(len(bc.data)), "input-bytes")
		})
	}
}
