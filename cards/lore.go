package cards

import (
	"fmt"
	"slices"
	"strings"

	"troupe/memory"
)

// CharacterBook is a card's lorebook (Tavern V2 character_book): entries
// whose text joins the prompt's world notes while their keys come up in the
// latest messages, so that a large world costs tokens only when it matters.
type CharacterBook struct {
	Name string `json:"name,omitempty"`
	// ScanDepth is how many of the latest messages are searched for keys;
	// 0 means defaultScanDepth.
	ScanDepth int `json:"scan_depth,omitempty"`
	// TokenBudget bounds the activated entries' tokens; 0 means
	// defaultLoreBudget. Over it, lower priorities go first.
	TokenBudget int `json:"token_budget,omitempty"`
	// Recursive lets activated entries' text activate further entries.
	Recursive bool        `json:"recursive_scanning,omitempty"`
	Entries   []LoreEntry `json:"entries"`
}

// LoreEntry is one lorebook entry.
type LoreEntry struct {
	Name    string   `json:"name,omitempty"`
	Keys    []string `json:"keys"`
	Content string   `json:"content"`
	// Enabled is true when absent: cards exported by some tools omit it.
	Enabled *bool `json:"enabled,omitempty"`
	// InsertionOrder orders the activated entries, lowest first.
	InsertionOrder int  `json:"insertion_order"`
	CaseSensitive  bool `json:"case_sensitive,omitempty"`
	// Selective entries also need one of SecondaryKeys.
	Selective     bool     `json:"selective,omitempty"`
	SecondaryKeys []string `json:"secondary_keys,omitempty"`
	// Constant entries are always active.
	Constant bool `json:"constant,omitempty"`
	// Priority decides what stays when the budget is short: higher stays.
	Priority int `json:"priority,omitempty"`
}

const (
	// defaultScanDepth is how many messages are searched when the book
	// does not say: the last two beats.
	defaultScanDepth = 4
	// defaultLoreBudget is the activated entries' token budget when the
	// book does not say.
	defaultLoreBudget = 1024
	// maxLoreEntries bounds a book, so that a pasted dump cannot make every
	// turn scan thousands of entries.
	maxLoreEntries = 1000
)

// validate checks what ParseCard cannot leave to chance.
func (b *CharacterBook) validate() error {
	switch {
	case b.ScanDepth < 0:
		return fmt.Errorf("character_book.scan_depth is %d; it must be 0 (the default, %d) or more", b.ScanDepth, defaultScanDepth)
	case b.TokenBudget < 0:
		return fmt.Errorf("character_book.token_budget is %d; it must be 0 (the default, %d) or more", b.TokenBudget, defaultLoreBudget)
	case len(b.Entries) > maxLoreEntries:
		return fmt.Errorf("character_book has %d entries; at most %d are taken", len(b.Entries), maxLoreEntries)
	}
	return nil
}

// Activate returns the text of the entries that the latest messages (oldest
// first) call up, in insertion order, within the token budget, with
// {{char}} and {{user}} expanded.
func (b *CharacterBook) Activate(messages []string, char, user string) []string {
	if b == nil || len(b.Entries) == 0 {
		return nil
	}
	depth := b.ScanDepth
	if depth == 0 {
		depth = defaultScanDepth
	}
	scan := strings.Join(messages[max(0, len(messages)-depth):], "\n")
	active := make([]bool, len(b.Entries))
	for changed := true; changed; {
		changed = false
		var added []string
		lower := strings.ToLower(scan)
		for i, e := range b.Entries {
			if active[i] || !e.on() || !e.matches(scan, lower) {
				continue
			}
			active[i], changed = true, true
			added = append(added, e.Content)
		}
		if !b.Recursive {
			break
		}
		scan += "\n" + strings.Join(added, "\n")
	}
	var picked []int
	for i, on := range active {
		if on {
			picked = append(picked, i)
		}
	}
	// Within the budget, the higher priorities (then the earlier entries)
	// stay.
	slices.SortStableFunc(picked, func(x, y int) int { return b.Entries[y].Priority - b.Entries[x].Priority })
	budget := b.TokenBudget
	if budget == 0 {
		budget = defaultLoreBudget
	}
	var kept []int
	used := 0
	for _, i := range picked {
		n := memory.EstimateTokens(b.Entries[i].Content)
		if used+n > budget {
			continue
		}
		used += n
		kept = append(kept, i)
	}
	slices.SortStableFunc(kept, func(x, y int) int {
		if d := b.Entries[x].InsertionOrder - b.Entries[y].InsertionOrder; d != 0 {
			return d
		}
		return x - y
	})
	out := make([]string, 0, len(kept))
	for _, i := range kept {
		out = append(out, strings.TrimSpace(Expand(b.Entries[i].Content, char, user)))
	}
	return out
}

func (e LoreEntry) on() bool {
	return (e.Enabled == nil || *e.Enabled) && strings.TrimSpace(e.Content) != ""
}

// matches reports whether the entry is called up by text (lower is text in
// lower case).
func (e LoreEntry) matches(text, lower string) bool {
	if e.Constant {
		return true
	}
	if !e.CaseSensitive {
		text = lower
	}
	if !e.anyKey(e.Keys, text) {
		return false
	}
	return !e.Selective || len(e.SecondaryKeys) == 0 || e.anyKey(e.SecondaryKeys, text)
}

// anyKey reports whether one of keys occurs in text; keys match in any case
// unless the entry is case-sensitive (text is then already lower-cased).
func (e LoreEntry) anyKey(keys []string, text string) bool {
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !e.CaseSensitive {
			k = strings.ToLower(k)
		}
		if strings.Contains(text, k) {
			return true
		}
	}
	return false
}
