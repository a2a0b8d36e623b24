package media

import (
	"encoding/binary"
	"image"
)

// jpegMeta reads a JPEG's markers up to its scan: the EXIF orientation (1,
// upright, when there is none) and whether it carries metadata that would
// leave with its bytes (EXIF or XMP in APP1, IPTC in APP13, a comment).
func jpegMeta(data []byte) (orient int, meta bool) {
	orient = 1
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return orient, false
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			return orient, meta
		}
		m := data[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0xda || m == 0xd9: // start of scan, end of image
			return orient, meta
		case m == 0x01 || (m >= 0xd0 && m <= 0xd7): // no length
			i += 2
			continue
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return orient, meta
		}
		seg := data[i+4 : i+2+n]
		switch m {
		case 0xe1:
			meta = true
			if len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
				orient = tiffOrientation(seg[6:])
			}
		case 0xed, 0xfe:
			meta = true
		}
		i += 2 + n
	}
	return orient, meta
}

// tiffOrientation is tag 0x0112 of an EXIF block's first IFD, 1 when it is
// absent or out of range.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	off := int64(bo.Uint32(t[4:]))
	if off < 8 || off+2 > int64(len(t)) {
		return 1
	}
	n := int64(bo.Uint16(t[off:]))
	for k := range n {
		e := off + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 {
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// orientRGBA turns m upright by EXIF orientation o (2 to 8 mirror or
// rotate; anything else leaves m as it is).
func orientRGBA(m *image.RGBA, o int, st *imageStats) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	st.hold(int64(len(out.Pix)))
	for y := range h {
		for x := range w {
			var dx, dy int
			switch o {
			case 2:
				dx, dy = w-1-x, y
			case 3:
				dx, dy = w-1-x, h-1-y
			case 4:
				dx, dy = x, h-1-y
			case 5:
				dx, dy = y, x
			case 6:
				dx, dy = h-1-y, x
			case 7:
				dx, dy = h-1-y, w-1-x
			case 8:
				dx, dy = y, w-1-x
			}
			si := m.PixOffset(x+m.Rect.Min.X, y+m.Rect.Min.Y)
			di := out.PixOffset(dx, dy)
			copy(out.Pix[di:di+4], m.Pix[si:si+4])
		}
	}
	st.drop(int64(len(m.Pix)))
	return out
}

// plainPNG reports whether a PNG holds only pixels and colour information:
// no text chunks, no EXIF, no animation, nothing after its end.
func plainPNG(data []byte) bool {
	const sig = "\x89PNG\r\n\x1a\n"
	if len(data) < len(sig) || string(data[:len(sig)]) != sig {
		return false
	}
	for i := len(sig); i+8 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[i:]))
		typ := string(data[i+4 : i+8])
		switch typ {
		case "IHDR", "PLTE", "IDAT", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "pHYs", "bKGD":
		case "IEND":
			return int64(i)+12 == int64(len(data))
		default:
			return false
		}
		i += int(min(n+12, int64(len(data))))
	}
	return false
}
