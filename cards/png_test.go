package cards_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"troupe/cards"
	"troupe/cards/cardstest"
)

const (
	v2Card = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Old","first_mes":"from chara"}}`
	v3Card = `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"New","nickname":"Newt","first_mes":"from ccv3"}}`
)

func TestReadPNG(t *testing.T) {
	t.Parallel()
	pic := cardstest.Picture(t, 4, 4, color.Gray{Y: 9})
	tests := []struct {
		name     string
		chunks   []cardstest.Chunk
		wantName string
		wantErr  string
	}{
		{"chara only", []cardstest.Chunk{cardstest.CardChunk("chara", v2Card)}, "Old", ""},
		{"ccv3 only", []cardstest.Chunk{cardstest.CardChunk("ccv3", v3Card)}, "New", ""},
		{"both: ccv3 wins", []cardstest.Chunk{cardstest.CardChunk("chara", v2Card), cardstest.CardChunk("ccv3", v3Card)}, "New", ""},
		{"both, ccv3 first: ccv3 wins", []cardstest.Chunk{cardstest.CardChunk("ccv3", v3Card), cardstest.CardChunk("chara", v2Card)}, "New", ""},
		{"ccv3 broken: chara", []cardstest.Chunk{cardstest.CardChunk("chara", v2Card), {Type: "tEXt", Key: "ccv3", Text: "!!!"}}, "Old", ""},
		{"zTXt", []cardstest.Chunk{{Type: "zTXt", Key: "chara", Text: cardstest.CardChunk("", v2Card).Text}}, "Old", ""},
		{"iTXt", []cardstest.Chunk{{Type: "iTXt", Key: "chara", Text: cardstest.CardChunk("", v2Card).Text}}, "Old", ""},
		{"iTXt compressed", []cardstest.Chunk{{Type: "iTXt", Key: "ccv3", Text: cardstest.CardChunk("", v3Card).Text, Compress: true}}, "New", ""},
		{"raw JSON in the chunk", []cardstest.Chunk{{Type: "tEXt", Key: "chara", Text: v2Card}}, "Old", ""},
		{"other text chunks only", []cardstest.Chunk{{Type: "tEXt", Key: "Title", Text: "a cat"}, {Type: "zTXt", Key: "Comment", Text: "hi"}}, "", "no chara or ccv3"},
		{"not base64", []cardstest.Chunk{{Type: "tEXt", Key: "chara", Text: "%%%"}}, "", "not base64"},
		{"not a card inside", []cardstest.Chunk{cardstest.CardChunk("chara", `{"spec":"chara_card_v2","data":{"name":""}}`)}, "", "name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := cards.ReadPNG(bytes.NewReader(cardstest.PNG(t, pic, tt.chunks...)))
			if tt.wantErr != "" {
				if !errors.Is(err, cards.ErrCardInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want ErrCardInvalid saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c.Name != tt.wantName || c.Format != "png" {
				t.Fatalf("got %q (%s), %v; want %q", c.Name, c.Format, err, tt.wantName)
			}
			// The avatar is the picture without the card chunks.
			if !bytes.HasPrefix(c.Image, []byte("\x89PNG")) || bytes.Contains(c.Image, []byte("chara")) || bytes.Contains(c.Image, []byte("ccv3")) {
				t.Errorf("image = %d bytes, with card chunks or no PNG signature", len(c.Image))
			}
		})
	}
	if _, err := cards.ReadPNG(strings.NewReader("GIF89a")); !errors.Is(err, cards.ErrCardInvalid) {
		t.Errorf("a GIF: %v", err)
	}
}

// endless is a PNG stream of 1 MB IDAT chunks that never ends, counting
// what was read from it.
type endless struct {
	head []byte
	pos  int // within the current chunk: 8 header bytes, 1 MB, 4 CRC bytes
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	const size = 1 << 20
	n := copy(p, e.head)
	e.head = e.head[n:]
	for ; n < len(p); n++ {
		p[n] = 0
		switch e.pos {
		case 1:
			p[n] = size >> 16
		case 4, 5, 6, 7:
			p[n] = "IDAT"[e.pos-4]
		}
		e.pos = (e.pos + 1) % (size + 12)
	}
	e.read += int64(n)
	return n, nil
}

// TestLargePNGRefusedFast: a PNG stream larger than the limit is refused
// after reading no more than the limit, holding at most the kept picture in
// memory; a 50 MB file is refused before it is read.
func TestLargePNGRefusedFast(t *testing.T) {
	pic := cardstest.Picture(t, 2, 2, color.Gray{})
	head := cardstest.PNG(t, pic, cardstest.CardChunk("chara", v2Card))
	head = head[:bytes.Index(head, []byte("IEND"))-4] // the card, then endless IDAT
	src := &endless{head: head}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := cards.ReadPNG(src)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if src.read > cards.MaxPNGBytes+64<<10 {
		t.Errorf("read %d bytes; the limit is %d", src.read, cards.MaxPNGBytes)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 2*cards.MaxImageBytes {
		t.Errorf("allocated %d MB reading a stream refused at %d MB", alloc>>20, cards.MaxPNGBytes>>20)
	}
	t.Logf("endless PNG refused after %d MB (%d MB allocated) in %v: %v", src.read>>20, alloc>>20, time.Since(start), err)

	// A 50 MB file is refused by its size, before it is read.
	path := filepath.Join(t.TempDir(), "huge.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := cards.LoadCard(path); !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "50.0 MB") {
		t.Errorf("a 50 MB PNG: %v", err)
	}

	// A chunk claiming more than the limit is refused without reading it.
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], 1<<30)
	copy(hdr[4:], "IDAT")
	r := io.MultiReader(bytes.NewReader(head), bytes.NewReader(hdr[:]), &endless{})
	if _, err := cards.ReadPNG(r); !errors.Is(err, cards.ErrTooLarge) {
		t.Errorf("a 1 GB chunk: %v", err)
	}
}

// TestCardSizeLimits: a card over 2 MB of text, lore included, is refused
// with the reason; a 10 MB JSON file is refused before it is read.
func TestCardSizeLimits(t *testing.T) {
	t.Parallel()
	entry := `{"keys":["k"],"content":"` + strings.Repeat("lore ", 1000) + `"}`
	entries := strings.TrimSuffix(strings.Repeat(entry+",", 500), ",")
	big := `{"spec":"chara_card_v2","data":{"name":"Big","description":"d","character_book":{"entries":[` + entries + `]}}}`
	_, err := cards.ParseCard([]byte(big))
	if !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "of it lore") || !strings.Contains(err.Error(), "limit is 2.0 MB") {
		t.Errorf("2.4 MB of lore: %v", err)
	}
	ok := `{"spec":"chara_card_v2","data":{"name":"Fits","description":"` + strings.Repeat("x", 1<<20) + `"}}`
	if _, err := cards.ParseCard([]byte(ok)); err != nil {
		t.Errorf("1 MB of text: %v", err)
	}
	path := filepath.Join(t.TempDir(), "ten.json")
	if err := os.WriteFile(path, []byte(`{"name":"Ten","description":"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 10<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := cards.LoadCard(path); !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "10.0 MB") {
		t.Errorf("a 10 MB file: %v", err)
	}
}

// TestPNGInflateBomb: a PNG of nearly 20 MB made of compressed chara
// chunks, each inflating to almost the size of a whole card, is refused as
// too large soon after its first chunks, not after inflating them all.
func TestPNGInflateBomb(t *testing.T) {
	t.Parallel()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(bytes.Repeat([]byte("A"), 10<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	body := append([]byte("chara\x00\x00"), z.Bytes()...)
	chunk := func(w *bytes.Buffer, typ string, body []byte) {
		var hdr [8]byte
		binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
		copy(hdr[4:], typ)
		w.Write(hdr[:])
		w.Write(body)
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(append([]byte(typ), body...)))
		w.Write(sum[:])
	}
	pic := cardstest.Picture(t, 2, 2, color.Gray{})
	var bomb bytes.Buffer
	bomb.Write(pic[:bytes.Index(pic, []byte("IEND"))-4])
	for bomb.Len()+len(body)+24 < cards.MaxPNGBytes-1024 {
		chunk(&bomb, "zTXt", body)
	}
	chunk(&bomb, "IEND", nil)
	path := filepath.Join(t.TempDir(), "bomb.png")
	if err := os.WriteFile(path, bomb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := cards.LoadCard(path)
	took := time.Since(start)
	if !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "inflates beyond") {
		t.Fatalf("a %d MB PNG of compressed chara chunks: got %v, want ErrTooLarge saying the chunks inflate beyond the limit", bomb.Len()>>20, err)
	}
	// A generous bound: the refusal inflates about a megabyte.
	if took > time.Second {
		t.Errorf("refused after %v, want well under a second", took)
	}
	t.Logf("%d MB bomb refused in %v: %v", bomb.Len()>>20, took, err)

	// Chunks that inflate only a few tens of times their size are refused
	// once all of them together inflate beyond the cap.
	var plain bytes.Buffer
	for i := range 3 << 10 { // 3 MB: a few varying bytes in each kilobyte
		block := make([]byte, 1<<10)
		binary.BigEndian.PutUint64(block, uint64(i)*0x9e3779b97f4a7c15)
		binary.BigEndian.PutUint64(block[8:], uint64(i)*0xc2b2ae3d27d4eb4f)
		plain.Write(block)
	}
	z.Reset()
	zw = zlib.NewWriter(&z)
	if _, err := zw.Write(plain.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var four bytes.Buffer
	four.Write(pic[:bytes.Index(pic, []byte("IEND"))-4])
	for range 4 {
		chunk(&four, "zTXt", append([]byte("chara\x00\x00"), z.Bytes()...))
	}
	chunk(&four, "IEND", nil)
	if _, err := cards.ReadPNG(bytes.NewReader(four.Bytes())); !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "in all") {
		t.Errorf("4 chunks of 3 MB each, compressed %d times: got %v, want ErrTooLarge for what they inflate to in all", plain.Len()/z.Len(), err)
	}

	// Many small card chunks are refused by their count.
	var many bytes.Buffer
	many.Write(pic[:bytes.Index(pic, []byte("IEND"))-4])
	small := append([]byte("chara\x00"), base64.StdEncoding.EncodeToString([]byte(v2Card))...)
	for range 50 {
		chunk(&many, "tEXt", small)
	}
	chunk(&many, "IEND", nil)
	if _, err := cards.ReadPNG(bytes.NewReader(many.Bytes())); !errors.Is(err, cards.ErrTooLarge) || !strings.Contains(err.Error(), "chara and ccv3 chunks") {
		t.Errorf("50 chara chunks: got %v, want ErrTooLarge for their count", err)
	}
}
