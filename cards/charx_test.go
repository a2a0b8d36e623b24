package cards_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	"troupe/cards"
	"troupe/cards/cardstest"
)

const charxCard = `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ivy","first_mes":"Hi.",` +
	`"assets":[{"type":"icon","uri":"embeded://assets/icon/other.png","name":"other"},{"type":"icon","uri":"embedded://assets/icon/main.png","name":"main"},` +
	`{"type":"background","uri":"embeded://assets/bg.png","name":"bg"}]}}`

func readCHARX(data []byte) (cards.Card, error) {
	return cards.ReadCHARX(bytes.NewReader(data), int64(len(data)))
}

func TestReadCHARX(t *testing.T) {
	t.Parallel()
	main := cardstest.Picture(t, 3, 3, color.Gray{Y: 1})
	other := cardstest.Picture(t, 5, 5, color.Gray{Y: 2})
	c, err := readCHARX(cardstest.CHARX(t, map[string][]byte{
		"card.json": []byte(charxCard), "assets/icon/main.png": main, "assets/icon/other.png": other, "assets/bg.png": other,
	}))
	if err != nil || c.Name != "Ivy" || c.Format != "charx" || c.Spec != "v3" {
		t.Fatalf("got %+v, %v", c.Name, err)
	}
	if !bytes.Equal(c.Image, main) {
		t.Errorf("the avatar is not the main icon")
	}
	for name, files := range map[string]map[string][]byte{
		"no card.json":  {"readme.txt": []byte("hi")},
		"bad card.json": {"card.json": []byte(`{"spec":"chara_card_v3","data":{"name":5`)},
	} {
		if _, err := readCHARX(cardstest.CHARX(t, files)); !errors.Is(err, cards.ErrCardInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := readCHARX([]byte("PK\x03\x04 not really")); !errors.Is(err, cards.ErrCardInvalid) || !strings.Contains(err.Error(), "zip") {
		t.Errorf("a broken zip: %v", err)
	}
	// An icon the card does not point at is found in assets/icon/.
	c, err = readCHARX(cardstest.CHARX(t, map[string][]byte{"card.json": []byte(v3Card), "assets/icon/face.png": main}))
	if err != nil || !bytes.Equal(c.Image, main) {
		t.Errorf("an icon in assets/icon/: image %d bytes, %v", len(c.Image), err)
	}
	// An icon over the image limit is left out; the card still loads.
	c, err = readCHARX(cardstest.CHARX(t, map[string][]byte{"card.json": []byte(charxCard), "assets/icon/main.png": make([]byte, cards.MaxImageBytes+1)}))
	if err != nil || c.Image != nil {
		t.Errorf("an oversize icon: image %d bytes, %v", len(c.Image), err)
	}
}

// bomb is a zip whose card.json inflates to size bytes of spaces, its
// header claiming claimed bytes.
func bomb(t *testing.T, size, claimed int) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for n := 0; n < size; n += len(chunk) {
		fw.Write(chunk)
	}
	fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "card.json", Method: zip.Deflate,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(claimed)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return b.Bytes()
}

// TestZipBombRefusedFast: a card.json that inflates beyond the limit is
// refused, whether the archive says so or lies about it, after inflating at
// most the limit.
func TestZipBombRefusedFast(t *testing.T) {
	t.Parallel()
	const size = cards.MaxCardJSON + 4<<20
	for _, claimed := range []int{size, 100} {
		t.Run(fmt.Sprintf("header says %d", claimed), func(t *testing.T) {
			data := bomb(t, size, claimed)
			start := time.Now()
			_, err := readCHARX(data)
			if !errors.Is(err, cards.ErrCardInvalid) || !strings.Contains(err.Error(), "card.json unpacks") {
				t.Fatalf("a %d KB zip unpacking to %d MB: %v", len(data)>>10, size>>20, err)
			}
			t.Logf("%d KB zip refused in %v: %v", len(data)>>10, time.Since(start), err)
		})
	}
	// Too many files.
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i <= cards.MaxCHARXFiles; i++ {
		zw.Create(fmt.Sprintf("f%d", i))
	}
	zw.Close()
	if _, err := readCHARX(b.Bytes()); !errors.Is(err, cards.ErrTooLarge) {
		t.Errorf("%d files: %v", cards.MaxCHARXFiles+1, err)
	}
}
