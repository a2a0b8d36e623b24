package cards_test

import (
	"bytes"
	"errors"
	"image/color"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest"
)

func FuzzReadPNG(f *testing.F) {
	pic := cardstest.Picture(f, 2, 2, color.Gray{Y: 3})
	f.Add(pic)
	f.Add(cardstest.PNG(f, pic, cardstest.CardChunk("chara", v2Card)))
	f.Add(cardstest.PNG(f, pic, cardstest.CardChunk("chara", v2Card), cardstest.CardChunk("ccv3", v3Card)))
	f.Add(cardstest.PNG(f, pic, cardstest.Chunk{Type: "zTXt", Key: "chara", Text: cardstest.CardChunk("", v2Card).Text}))
	f.Add(cardstest.PNG(f, pic, cardstest.Chunk{Type: "iTXt", Key: "ccv3", Text: cardstest.CardChunk("", v3Card).Text, Compress: true}))
	f.Add(cardstest.PNG(f, pic, cardstest.Chunk{Type: "iTXt", Key: "chara", Text: v2Card}))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x05tEXtchara"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := cards.ReadPNG(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, cards.ErrCardInvalid) {
				t.Fatalf("error %v does not wrap ErrCardInvalid", err)
			}
			return
		}
		if c.Name == "" || c.Format != "png" {
			t.Fatalf("accepted a card named %q, format %q", c.Name, c.Format)
		}
		if c.Image != nil && (!bytes.HasPrefix(c.Image, []byte("\x89PNG\r\n\x1a\n")) || len(c.Image) > cards.MaxImageBytes || len(c.Image) > len(data)) {
			t.Fatalf("kept an image of %d bytes from %d", len(c.Image), len(data))
		}
		// What was read can be written back and read again.
		var out bytes.Buffer
		if err := c.WritePNG(&out); err != nil {
			t.Fatal(err)
		}
		if again, err := cards.ReadPNG(&out); err != nil || again.Name != c.Name {
			t.Fatalf("written back: %q, %v", again.Name, err)
		}
	})
}

func FuzzReadCHARX(f *testing.F) {
	icon := cardstest.Picture(f, 2, 2, color.Gray{Y: 3})
	f.Add(cardstest.CHARX(f, map[string][]byte{"card.json": []byte(charxCard), "assets/icon/main.png": icon}))
	f.Add(cardstest.CHARX(f, map[string][]byte{"card.json": []byte(v2Card)}))
	f.Add(cardstest.CHARX(f, map[string][]byte{"x.json": []byte(v2Card)}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := cards.ReadCHARX(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, cards.ErrCardInvalid) {
				t.Fatalf("error %v does not wrap ErrCardInvalid", err)
			}
			return
		}
		if c.Name == "" || c.Format != "charx" || len(c.Image) > cards.MaxImageBytes {
			t.Fatalf("accepted a card named %q, format %q, image %d bytes", c.Name, c.Format, len(c.Image))
		}
	})
}
