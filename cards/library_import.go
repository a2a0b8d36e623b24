package cards

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// maxIDRunes bounds the ids Import gives, well within the database columns.
const maxIDRunes = 48

// Import copies the card file src into the library folder dir under a
// stable id: its file name in lower case, with anything but letters, digits,
// '-' and '_' made '-'. The card is read before anything is written, so a
// file that is no card is refused and dir is left as it was. Importing the
// same file again is a no-op; a different card under the same id is
// refused. It returns the card as the library will load it.
func Import(dir, src string) (Card, error) {
	if _, err := LoadCard(src); err != nil {
		return Card{}, err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	id := ImportID(src, data)
	ext := strings.ToLower(filepath.Ext(src))
	if !cardExts[ext] {
		ext = ".json"
		if bytes.HasPrefix(data, pngSignature) {
			ext = ".png"
		} else if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			ext = ".charx"
		}
	}
	dst := filepath.Join(dir, id+ext)
	for e := range cardExts {
		p := filepath.Join(dir, id+e)
		old, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if p == dst && bytes.Equal(old, data) {
			return LoadCard(dst)
		}
		return Card{}, fmt.Errorf("cards: import %s: the id %q is taken by %s, a different card; rename the file to import it", src, id, p)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".import-*")
	if err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	return LoadCard(dst)
}

// ImportID is the id Import gives the card file at path with content data.
func ImportID(path string, data []byte) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(base) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	id := strings.Trim(b.String(), "-")
	if r := []rune(id); len(r) > maxIDRunes {
		sum := sha256.Sum256([]byte(id))
		id = strings.TrimRight(string(r[:maxIDRunes-9]), "-") + "-" + hex.EncodeToString(sum[:4])
	}
	if id == "" {
		sum := sha256.Sum256(data)
		id = "card-" + hex.EncodeToString(sum[:4])
	}
	return id
}
