package cards

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WorldsDir is the folder of world-info files inside the card folder.
const WorldsDir = "worlds"

// maxBookFile bounds a lorebook file: a world of 5000 entries fits easily.
const maxBookFile = 32 << 20

// ReadBookFile reads a lorebook or world-info file. A book without a name is
// named after its file. A file over 32 MB is refused before it is read;
// errors wrap ErrBook when the file is no book.
func ReadBookFile(path string) (*Book, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cards: read lorebook: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBookFile {
		return nil, fmt.Errorf("%w: %s is larger than %d MB", ErrBook, path, maxBookFile>>20)
	}
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

// Worlds are the world-info files of a card folder, by name.
type Worlds struct {
	byName map[string]*Book
}

// LoadWorlds reads every *.json file in cardsDir/worlds. A file that does
// not load is returned among the errors, with its name and why, and the
// rest still load; a folder that does not exist holds no worlds.
func LoadWorlds(cardsDir string) (*Worlds, []error) {
	w := &Worlds{byName: map[string]*Book{}}
	dir := filepath.Join(cardsDir, WorldsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return w, []error{fmt.Errorf("cards: worlds folder: %w", err)}
	}
	var errs []error
	for _, de := range entries {
		file := de.Name()
		if de.IsDir() || !strings.EqualFold(filepath.Ext(file), ".json") {
			continue
		}
		b, err := ReadBookFile(filepath.Join(dir, file))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.Name = strings.TrimSuffix(file, filepath.Ext(file))
		w.byName[b.Name] = b
	}
	return w, errs
}

// NewWorlds holds books already read, by their names.
func NewWorlds(books ...*Book) *Worlds {
	w := &Worlds{byName: map[string]*Book{}}
	for _, b := range books {
		w.byName[b.Name] = b
	}
	return w
}

// Get returns the world named name: exactly, else in any case.
func (w *Worlds) Get(name string) (*Book, bool) {
	if w == nil || name == "" {
		return nil, false
	}
	if b, ok := w.byName[name]; ok {
		return b, true
	}
	for n, b := range w.byName {
		if strings.EqualFold(n, name) {
			return b, true
		}
	}
	return nil, false
}
