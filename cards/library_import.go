package cards

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"troupe/text"
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
	sum, head, err := fileSum(src)
	if err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	id := ImportID(src, sum)
	ext := strings.ToLower(filepath.Ext(src))
	if !cardExts[ext] {
		ext = ".json"
		if bytes.HasPrefix(head, pngSignature) {
			ext = ".png"
		} else if bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			ext = ".charx"
		}
	}
	dst := filepath.Join(dir, id+ext)
	for e := range cardExts {
		p := filepath.Join(dir, id+e)
		old, _, err := fileSum(p)
		if err != nil {
			continue
		}
		if p == dst && old == sum {
			return LoadCard(dst)
		}
		return Card{}, fmt.Errorf("cards: import %s: the id %q is taken by %s, a different card; rename the file to import it", src, id, p)
	}
	if err := copyInto(dir, src, dst); err != nil {
		return Card{}, fmt.Errorf("cards: import: %w", err)
	}
	return LoadCard(dst)
}

// fileSum returns the SHA-256 of a file, in hex, and its first bytes; the
// file is streamed, whatever its size.
func fileSum(path string) (string, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	h := sha256.New()
	h.Write(head[:n])
	if _, err := io.Copy(h, f); err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), head[:n], nil
}

// copyInto copies src to dst through a temporary file in dir, so that dst
// is whole or absent.
func copyInto(dir, src, dst string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, ".import-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// ImportID is the id Import gives the card file at path, whose content has
// the hex SHA-256 sum (the id of a file whose name has no letter or digit).
func ImportID(path, sum string) string {
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
	if utf8.RuneCountInString(id) > maxIDRunes {
		sum := sha256.Sum256([]byte(id))
		id = strings.TrimRight(text.CutRunes(id, maxIDRunes-9), "-") + "-" + hex.EncodeToString(sum[:4])
	}
	if id == "" {
		id = "card-" + sum[:min(8, len(sum))]
	}
	return id
}

// Imported is what ImportFile made of a file: a card of the library, or a
// world of the worlds folder.
type Imported struct {
	// Card is the card imported (its ID set); zero when the file was a world.
	Card Card
	// World is the world imported, nil for a card; WorldFile is the file
	// it was written to.
	World     *Book
	WorldFile string
}

// ImportFile imports the file src as troupe card import does: a card goes
// into the card folder cardsDir (Import); a SillyTavern world-info file,
// or any file when world is set, goes into the worlds folder
// (ImportWorldDir of cardsDir and worldsDir) as NAME.json, where name is
// as, else src's stem (ImportWorld). Nothing is written for a file that is
// neither.
func ImportFile(cardsDir, worldsDir, src, as string, world bool) (Imported, error) {
	if !world {
		k, err := Import(cardsDir, src)
		if err == nil || !isWorldInfo(err) {
			return Imported{Card: k}, err
		}
	}
	b, dst, err := ImportWorld(ImportWorldDir(cardsDir, worldsDir), src, as)
	if err != nil {
		return Imported{}, err
	}
	return Imported{World: b, WorldFile: dst}, nil
}

// isWorldInfo reports whether a card's load error says the file is a
// world-info file (see the lenient reader's ErrNotCard).
func isWorldInfo(err error) bool {
	return errors.Is(err, ErrNotCard) && strings.Contains(err.Error(), "world-info")
}
