package cards

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"troupe/text"
)

// Formats a card file may have, by extension.
var cardExts = map[string]bool{".json": true, ".png": true, ".charx": true}

// IsCardFile reports whether path has the extension of a card file.
func IsCardFile(path string) bool { return cardExts[strings.ToLower(filepath.Ext(path))] }

// LoadCard reads a card file: Tavern JSON, a PNG with the card in its text
// chunks, or a CHARX archive, told apart by their first bytes. Its id is
// the file name without extension, lower-cased. Files over the size limits
// are refused before they are read.
func LoadCard(path string) (Card, error) {
	c, err := loadCard(path)
	if err != nil {
		return Card{}, fmt.Errorf("%s: %w", path, err)
	}
	c.ID = CardIDFromPath(path)
	return c, nil
}

func loadCard(path string) (Card, error) {
	f, err := os.Open(path)
	if err != nil {
		return Card{}, fmt.Errorf("cards: load card: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Card{}, fmt.Errorf("cards: load card: %w", err)
	}
	if info.IsDir() {
		return Card{}, fmt.Errorf("%w: a folder", ErrNotCard)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(8)
	switch {
	case bytes.Equal(head, pngSignature):
		if info.Size() > MaxPNGBytes {
			return Card{}, fmt.Errorf("%w: the PNG is %s; the limit is %s", ErrTooLarge, megabytes64(info.Size()), megabytes(MaxPNGBytes))
		}
		return ReadPNG(br)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return ReadCHARX(f, info.Size())
	}
	if info.Size() > MaxCardJSON {
		return Card{}, fmt.Errorf("%w: the file is %s; a card's JSON may have %s", ErrTooLarge, megabytes64(info.Size()), megabytes(MaxCardJSON))
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxCardJSON+1))
	if err != nil {
		return Card{}, fmt.Errorf("cards: load card: %w", err)
	}
	c, err := ParseCard(data)
	c.Format = "json"
	return c, err
}

func megabytes64(n int64) string {
	if n > MaxCardJSON*16 {
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	}
	return megabytes(int(n))
}

// CardIDFromPath derives a card id from a file name: lower-cased, and
// replaced by its stable stand-in (models.FitID) when too long for an id.
func CardIDFromPath(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return text.FitID(strings.ToLower(base), text.IDSize)
}
