package cards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// WorldsDir is the name of a folder of world-info files: inside the card
// folder, or beside it as SillyTavern keeps them (characters/ and worlds/
// side by side).
const WorldsDir = "worlds"

// WorldDirs are the folders world files are read from: worldsDir when it
// is set, else a worlds/ folder inside cardsDir, then one beside it. The
// first folder holding a name wins.
func WorldDirs(cardsDir, worldsDir string) []string {
	if worldsDir != "" {
		return []string{worldsDir}
	}
	inside := filepath.Join(cardsDir, WorldsDir)
	beside := filepath.Join(filepath.Dir(filepath.Clean(cardsDir)), WorldsDir)
	if filepath.Clean(inside) == filepath.Clean(beside) {
		return []string{inside}
	}
	return []string{inside, beside}
}

// ImportWorldDir is the folder a world file is imported into: the first of
// WorldDirs that exists, else the first.
func ImportWorldDir(cardsDir, worldsDir string) string {
	dirs := WorldDirs(cardsDir, worldsDir)
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return dirs[0]
}

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
	// paths are the files the worlds were read from, by name.
	paths map[string]string
	// dirs are the folders the worlds were looked for in, for saying
	// where a missing one was not found.
	dirs []string

	mu sync.Mutex
	// linked caches each card's book without the entries its linked world
	// also holds, by the card's book.
	linked map[*Book]linkedBook
}

// maxLinked bounds the cache of linked books.
const maxLinked = 4096

// linkedBook is a card's book as it goes in beside world.
type linkedBook struct {
	world, rest *Book
}

// LoadWorlds reads every *.json file in cardsDir/worlds and in a worlds/
// folder beside cardsDir (WorldDirs).
func LoadWorlds(cardsDir string) (*Worlds, []error) {
	return LoadWorldsFrom(WorldDirs(cardsDir, "")...)
}

// LoadWorldsFrom reads every *.json file of each folder of dirs; a world
// is named after its file, and the first folder holding a name wins. A
// file that does not load is returned among the errors, with its name and
// why, and the rest still load; a folder that does not exist holds no
// worlds.
func LoadWorldsFrom(dirs ...string) (*Worlds, []error) {
	w := &Worlds{byName: map[string]*Book{}, paths: map[string]string{}, dirs: dirs}
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cards: worlds folder: %w", err))
			continue
		}
		for _, de := range entries {
			file := de.Name()
			if de.IsDir() || !strings.EqualFold(filepath.Ext(file), ".json") {
				continue
			}
			name := strings.TrimSuffix(file, filepath.Ext(file))
			if _, ok := w.byName[name]; ok {
				continue
			}
			b, err := ReadBookFile(filepath.Join(dir, file))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			b.Name = name
			w.byName[name] = b
			w.paths[name] = filepath.Join(dir, file)
		}
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

// Dirs are the folders the worlds were read from.
func (w *Worlds) Dirs() []string {
	if w == nil {
		return nil
	}
	return w.dirs
}

// Path is the file the world named name (as Get found it) was read from.
func (w *Worlds) Path(name string) string {
	if w == nil {
		return ""
	}
	return w.paths[name]
}

// Names lists the worlds, sorted.
func (w *Worlds) Names() []string {
	if w == nil {
		return nil
	}
	names := make([]string, 0, len(w.byName))
	for n := range w.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BooksOf returns the lorebooks a card brings: its own book and the world
// it links (extensions.world). When both hold an entry with the same keys
// and content it goes in once — the world's copy, as in SillyTavern — and
// the entries only one of them holds go in as usual. missing is the name
// of a linked world that w does not hold ("" when there is none).
func (w *Worlds) BooksOf(c Card) (books []*Book, missing string) {
	var world *Book
	if c.World != "" {
		var ok bool
		if world, ok = w.Get(c.World); !ok {
			missing = c.World
		}
	}
	switch {
	case c.Book == nil && world == nil:
		return nil, missing
	case world == nil:
		return []*Book{c.Book}, missing
	case c.Book == nil:
		return []*Book{world}, missing
	}
	rest := w.withoutShared(c.Book, world)
	if len(rest.Entries) == 0 {
		return []*Book{world}, ""
	}
	return []*Book{rest, world}, ""
}

// withoutShared is own without the entries world also holds, cached.
func (w *Worlds) withoutShared(own, world *Book) *Book {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l, ok := w.linked[own]; ok && l.world == world {
		return l.rest
	}
	shared := map[string]bool{}
	for i := range world.Entries {
		shared[entrySignature(&world.Entries[i])] = true
	}
	rest := own
	if slices.ContainsFunc(own.Entries, func(e Entry) bool { return shared[entrySignature(&e)] }) {
		cp := *own
		cp.Entries = nil
		for _, e := range own.Entries {
			if !shared[entrySignature(&e)] {
				cp.Entries = append(cp.Entries, e)
			}
		}
		rest = &cp
	}
	if w.linked == nil || len(w.linked) >= maxLinked {
		// Books of cards since reloaded are dropped with the rest.
		w.linked = map[*Book]linkedBook{}
	}
	w.linked[own] = linkedBook{world: world, rest: rest}
	return rest
}

// entrySignature is what makes two entries the same lore: their keys (in
// any order) and their text.
func entrySignature(e *Entry) string {
	keys := func(ks []string) string {
		out := make([]string, 0, len(ks))
		for _, k := range ks {
			if k = strings.TrimSpace(k); k != "" {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return strings.Join(out, "\x00")
	}
	return keys(e.Keys) + "\x01" + keys(e.Secondary) + "\x01" + strings.TrimSpace(e.Content)
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

// ImportWorld copies the world-info file src into the folder dir as
// NAME.json, where name is as given, else src's file stem: a card links a
// world by that name. The file is read before anything is written, so a
// file that is no lorebook is refused and dir is left as it was. Importing
// the same file again is a no-op; a different world under the name is
// refused. It returns the world as it will load, and the file written.
func ImportWorld(dir, src, name string) (*Book, string, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	}
	if name = strings.TrimSpace(name); name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return nil, "", fmt.Errorf("cards: import world %s: %q cannot name a file; give another name", src, name)
	}
	if _, err := ReadBookFile(src); err != nil {
		return nil, "", err
	}
	if !holdsEntries(src) {
		return nil, "", fmt.Errorf("%w: %s has no entries: it is no world-info file", ErrBook, src)
	}
	sum, _, err := fileSum(src)
	if err != nil {
		return nil, "", fmt.Errorf("cards: import world: %w", err)
	}
	dst := filepath.Join(dir, name+".json")
	if old, _, err := fileSum(dst); err == nil {
		if old != sum {
			return nil, "", fmt.Errorf("cards: import world %s: %s holds a different world; give another name", src, dst)
		}
	} else if err := copyInto(dir, src, dst); err != nil {
		return nil, "", fmt.Errorf("cards: import world: %w", err)
	}
	b, err := ReadBookFile(dst)
	if err != nil {
		return nil, "", err
	}
	b.Name = name
	return b, dst, nil
}

// holdsEntries reports whether the JSON file at path (already read as a
// book, so not over the size limit) has an entries field at its top.
func holdsEntries(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &top) != nil {
		return false
	}
	_, ok := top["entries"]
	return ok
}
