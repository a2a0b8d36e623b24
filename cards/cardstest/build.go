package cardstest

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"sort"
	"testing"
)

// Chunk is a text chunk for PNG: Type is tEXt, zTXt or iTXt (iTXt
// compressed when Compress is set); Text is written as given.
type Chunk struct {
	Type, Key, Text string
	Compress        bool
}

// CardChunk is a tEXt chunk holding card JSON in base64, as card tools
// write it.
func CardChunk(key, json string) Chunk {
	return Chunk{Type: "tEXt", Key: key, Text: base64.StdEncoding.EncodeToString([]byte(json))}
}

// Picture is a small PNG: a w×h square of one colour.
func Picture(tb testing.TB, w, h int, c color.Color) []byte {
	tb.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// PNG is picture with chunks inserted before its IEND chunk.
func PNG(tb testing.TB, picture []byte, chunks ...Chunk) []byte {
	tb.Helper()
	var out bytes.Buffer
	out.Write(picture[:8])
	rest := picture[8:]
	for len(rest) >= 12 {
		n := int(binary.BigEndian.Uint32(rest[:4]))
		if string(rest[4:8]) == "IEND" {
			for _, c := range chunks {
				writeChunk(tb, &out, c)
			}
		}
		out.Write(rest[:12+n])
		rest = rest[12+n:]
	}
	return out.Bytes()
}

func writeChunk(tb testing.TB, w *bytes.Buffer, c Chunk) {
	body := append([]byte(c.Key), 0)
	switch c.Type {
	case "tEXt":
		body = append(body, c.Text...)
	case "zTXt":
		body = append(body, 0)
		body = append(body, deflate(tb, c.Text)...)
	case "iTXt":
		if c.Compress {
			body = append(body, 1, 0, 0, 0)
			body = append(body, deflate(tb, c.Text)...)
		} else {
			body = append(body, 0, 0, 0, 0)
			body = append(body, c.Text...)
		}
	default:
		tb.Fatalf("chunk type %q", c.Type)
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
	copy(hdr[4:], c.Type)
	w.Write(hdr[:])
	w.Write(body)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(append(hdr[4:8:8], body...)))
	w.Write(sum[:])
}

func deflate(tb testing.TB, s string) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// CHARX is a zip archive of files (path → content), in path order.
func CHARX(tb testing.TB, files map[string][]byte) []byte {
	tb.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(files[n]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
