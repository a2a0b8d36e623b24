package cards

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"troupe/text"
)

// Library is the set of cards troupe can play.
type Library struct {
	cards   map[string]Card
	sources map[string]Source
	def     string
	failed  []Failure
}

// Failure is a file of the library folder that did not load, and why.
type Failure struct {
	Path string
	Err  error
}

// NewLibrary builds a library from cards; def names the default card (by
// id or name); with a single card and no def, that card is the default.
func NewLibrary(cards []Card, def string) (*Library, error) {
	l := &Library{cards: map[string]Card{}}
	for _, c := range cards {
		if _, dup := l.cards[c.ID]; dup {
			return nil, fmt.Errorf("cards: two cards with id %q", c.ID)
		}
		l.cards[c.ID] = c
	}
	switch {
	case def != "":
		if err := l.setDefault(def); err != nil {
			return nil, err
		}
	case len(cards) == 1:
		l.def = cards[0].ID
	}
	return l, nil
}

// ErrNoDefault is a default card that the library does not hold.
var ErrNoDefault = errors.New("cards: no such default card")

func (l *Library) setDefault(def string) error {
	c, ok := l.Find(def)
	if named := l.Named(def); !ok && len(named) > 1 {
		ids := make([]string, len(named))
		for i, c := range named {
			ids[i] = c.ID
		}
		return fmt.Errorf("%w: %q names %d cards (ids %s); give one's id", ErrNoDefault, def, len(named), strings.Join(ids, ", "))
	}
	if !ok {
		return fmt.Errorf("%w: %q is not in the library", ErrNoDefault, def)
	}
	l.def = c.ID
	return nil
}

// LoadLibrary loads every card file in dir (*.json, *.png, *.charx; not
// its subfolders, such as worlds/). A card's id is its file's stem (see
// CardIDFromPath) when no other card of the folder has that stem; cards
// whose files share a stem each get an id of their own from their file
// name (FileIDs), so none is skipped and none takes another's memory. A
// file that does not load is skipped and listed by Failed, so that one bad
// card does not take the others down. The error is for a folder that
// cannot be read, or wraps ErrNoDefault for a default card that is not
// there (with why, when its file did not load).
func LoadLibrary(dir, def string) (*Library, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cards: card library: %w", err)
	}
	var loaded []Card
	var names []string
	var failed []Failure
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() || !IsCardFile(p) {
			continue
		}
		c, err := LoadCard(p)
		if err != nil {
			failed = append(failed, Failure{Path: p, Err: err})
			continue
		}
		loaded = append(loaded, c)
		names = append(names, e.Name())
	}
	ids := FileIDs(names)
	sources := map[string]Source{}
	for i, c := range loaded {
		c.ID = ids[names[i]]
		loaded[i] = c
		src := Source{File: filepath.Join(dir, names[i])}
		if stem := CardIDFromPath(names[i]); stem != c.ID {
			src.SharedStem = stem
		}
		sources[c.ID] = src
	}
	l, err := NewLibrary(loaded, "")
	if err != nil {
		return nil, err
	}
	l.failed, l.sources = failed, sources
	if def != "" {
		if err := l.setDefault(def); err != nil {
			for _, f := range failed {
				if strings.EqualFold(CardIDFromPath(f.Path), def) {
					return nil, fmt.Errorf("%w: %q did not load: %w", ErrNoDefault, def, f.Err)
				}
			}
			return nil, err
		}
	}
	return l, nil
}

// Source is where a card of a library came from.
type Source struct {
	// File is the card's file.
	File string
	// SharedStem is the stem the file shares with another card of the
	// library ("" when it has its own): the card's id is then derived from
	// its file name instead.
	SharedStem string
}

// Source returns where the card with id came from; false for a card that
// was not loaded from a file (NewLibrary, Add).
func (l *Library) Source(id string) (Source, bool) {
	s, ok := l.sources[id]
	return s, ok
}

// AddFile loads the card file at path into the library and returns it, for
// a card named on the command line. A file of the library's folder is the
// library's card, under its id. Another file keeps its stem as its id when
// no card of the library has that id or stem, else it gets one derived from its
// file name or, when that is taken too, from its absolute path: two files
// with one stem never share a chat or a memory.
func (l *Library) AddFile(path string) (Card, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Card{}, fmt.Errorf("cards: %w", err)
	}
	for id, src := range l.sources {
		if other, err := os.Stat(src.File); err == nil && os.SameFile(info, other) {
			return l.cards[id], nil
		}
	}
	c, err := LoadCard(path)
	if err != nil {
		return Card{}, err
	}
	src := Source{File: path}
	if l.stemTaken(c.ID) {
		src.SharedStem = c.ID
		c.ID = stemExtID(filepath.Base(path))
		if _, taken := l.cards[c.ID]; taken {
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			for n := 8; ; n *= 2 {
				if c.ID = hashedID(filepath.Base(path), abs, n); l.cards[c.ID].ID == "" || n >= sha256.Size*2 {
					break
				}
			}
		}
	}
	l.cards[c.ID] = c
	if l.sources == nil {
		l.sources = map[string]Source{}
	}
	l.sources[c.ID] = src
	return c, nil
}

// stemTaken reports whether a card of the library has id, or two of its
// files share it as their stem.
func (l *Library) stemTaken(id string) bool {
	if _, ok := l.cards[id]; ok {
		return true
	}
	for _, s := range l.sources {
		if s.SharedStem == id {
			return true
		}
	}
	return false
}

// Failed lists the files of the library folder that did not load.
func (l *Library) Failed() []Failure { return l.failed }

// Add puts a card in the library (replacing one with the same id).
func (l *Library) Add(c Card) { l.cards[c.ID] = c }

// Default returns the default card, if there is one.
func (l *Library) Default() (Card, bool) {
	c, ok := l.cards[l.def]
	return c, ok
}

// Get returns the card with id.
func (l *Library) Get(id string) (Card, bool) {
	c, ok := l.cards[id]
	return c, ok
}

// Find looks a card up by id or name, in any case. A name that several
// cards share finds none of them: only their ids tell them apart (Named
// lists them).
func (l *Library) Find(key string) (Card, bool) {
	key = strings.TrimSpace(key)
	if c, ok := l.cards[text.FitID(strings.ToLower(key), text.IDSize)]; ok {
		return c, true
	}
	if named := l.Named(key); len(named) == 1 {
		return named[0], true
	}
	return Card{}, false
}

// Named returns the cards called name (in any case), sorted by id.
func (l *Library) Named(name string) []Card {
	name = strings.TrimSpace(name)
	var out []Card
	for _, c := range l.cards {
		if strings.EqualFold(c.Name, name) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// List returns the cards sorted by name, then id.
func (l *Library) List() []Card {
	out := make([]Card, 0, len(l.cards))
	for _, c := range l.cards {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}
