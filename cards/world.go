package cards

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrWorldNotFound is a world name with no file in the worlds folder.
var ErrWorldNotFound = errors.New("cards: world not found")

// WorldsDir is the folder of world-info files inside the card folder.
const WorldsDir = "worlds"

// maxBookFile bounds a lorebook file: a world of 5000 entries fits easily.
const maxBookFile = 32 << 20

// ReadBookFile reads a lorebook or world-info file. A book without a name is
// named after its file.
func ReadBookFile(path string) (*Book, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cards: read lorebook: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBookFile+1))
	if err != nil {
		return nil, fmt.Errorf("cards: read lorebook %s: %w", path, err)
	}
	if len(data) > maxBookFile {
		return nil, fmt.Errorf("%w: %s is larger than %d MB", ErrBook, path, maxBookFile>>20)
	}
	b, err := ParseBook(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b.Name == "" {
		b.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return b, nil
}

// LoadWorld reads the world named name from cardsDir/worlds: the file
// name.json, or the one whose name matches in any case. Errors wrap
// ErrWorldNotFound when there is no such file.
func LoadWorld(cardsDir, name string) (*Book, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: %q is not a world name", ErrWorldNotFound, name)
	}
	dir := filepath.Join(cardsDir, WorldsDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cards: worlds folder: %w", err)
	}
	for _, exact := range []bool{true, false} {
		for _, de := range entries {
			file := de.Name()
			if de.IsDir() || !strings.EqualFold(filepath.Ext(file), ".json") {
				continue
			}
			base := strings.TrimSuffix(file, filepath.Ext(file))
			if (exact && base == name) || (!exact && strings.EqualFold(base, name)) {
				b, err := ReadBookFile(filepath.Join(dir, file))
				if err != nil {
					return nil, err
				}
				// Per-chat timers are kept under the book's name: the
				// file's, so that a renamed world inside keeps them.
				b.Name = base
				return b, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: no %s.json in %s", ErrWorldNotFound, name, dir)
}
