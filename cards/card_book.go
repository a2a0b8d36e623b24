package cards

import (
	"encoding/json"
	"fmt"
)

// parseCharacterBook reads a card's character_book as leniently as the rest
// of the card: SillyTavern's names for the fields (key, keysecondary, order,
// disable, comment) are taken too, fractional orders round, a single key
// string is a list of one. The lorebook engine replaces this with its own
// parser.
func parseCharacterBook(raw json.RawMessage) (*CharacterBook, error) {
	f, ok := object(raw)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	r := &reader{f: f}
	b := &CharacterBook{
		Name:        r.str("name"),
		ScanDepth:   r.num("scan_depth", 0),
		TokenBudget: r.num("token_budget", 0),
		Recursive:   r.flag("recursive_scanning", false),
	}
	if r.err != nil {
		return nil, r.err
	}
	entries, err := f.list("entries")
	if err != nil {
		return nil, err
	}
	for i, ef := range entries {
		e, err := loreEntry(ef)
		if err != nil {
			return nil, fmt.Errorf("entries[%d].%v", i, err)
		}
		b.Entries = append(b.Entries, e)
	}
	return b, nil
}

func loreEntry(f fields) (LoreEntry, error) {
	r := &reader{f: f}
	pick := func(a, b string) string {
		if f.present(a) {
			return a
		}
		return b
	}
	e := LoreEntry{
		Name:           r.str(pick("name", "comment")),
		Keys:           r.strs(pick("keys", "key")),
		Content:        r.str("content"),
		InsertionOrder: r.num(pick("insertion_order", "order"), 100),
		CaseSensitive:  r.flag("case_sensitive", false),
		Selective:      r.flag("selective", false),
		SecondaryKeys:  r.strs(pick("secondary_keys", "keysecondary")),
		Constant:       r.flag("constant", false),
		Priority:       r.num("priority", 0),
	}
	on := true
	switch {
	case f.present("enabled"):
		on = r.flag("enabled", true)
	case f.present("disable"):
		on = !r.flag("disable", false)
	}
	if !on {
		e.Enabled = &on
	}
	return e, r.err
}
