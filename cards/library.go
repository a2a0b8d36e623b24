package cards

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"troupe/models"
)

// Library is the set of cards troupe can play.
type Library struct {
	cards  map[string]Card
	def    string
	failed []Failure
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
	if !ok {
		return fmt.Errorf("%w: %q is not in the library", ErrNoDefault, def)
	}
	l.def = c.ID
	return nil
}

// LoadLibrary loads every card file in dir (*.json, *.png, *.charx; not
// its subfolders, such as worlds/). A file that does not load is skipped and
// listed by Failed, so that one bad card does not take the others down. The
// error is for a folder that cannot be read, or wraps ErrNoDefault for a
// default card that is not there (with why, when its file did not load).
func LoadLibrary(dir, def string) (*Library, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cards: card library: %w", err)
	}
	var cards []Card
	var failed []Failure
	from := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() || !IsCardFile(p) {
			continue
		}
		c, err := LoadCard(p)
		if err == nil {
			if other, dup := from[c.ID]; dup {
				err = fmt.Errorf("%s: cards: the id %q is taken by %s", p, c.ID, filepath.Base(other))
			}
		}
		if err != nil {
			failed = append(failed, Failure{Path: p, Err: err})
			continue
		}
		from[c.ID] = p
		cards = append(cards, c)
	}
	l, err := NewLibrary(cards, "")
	if err != nil {
		return nil, err
	}
	l.failed = failed
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

// Find looks a card up by id or name, in any case.
func (l *Library) Find(key string) (Card, bool) {
	key = strings.TrimSpace(key)
	if c, ok := l.cards[models.FitID(strings.ToLower(key), models.IDSize)]; ok {
		return c, true
	}
	for _, c := range l.cards {
		if strings.EqualFold(c.Name, key) {
			return c, true
		}
	}
	return Card{}, false
}

// List returns the cards sorted by name.
func (l *Library) List() []Card {
	out := make([]Card, 0, len(l.cards))
	for _, c := range l.cards {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
