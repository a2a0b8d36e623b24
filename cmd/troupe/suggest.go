package main

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

// nearest returns up to n of known closest to want, nearest first: case is
// compared loosely (ids keep case, while people often type lowercase), so a
// case slip comes first.
func nearest(want string, known []string, n int) []string {
	type cand struct {
		s string
		d int
	}
	lw := strings.ToLower(want)
	var cs []cand
	seen := map[string]bool{}
	for _, k := range known {
		if seen[k] {
			continue
		}
		seen[k] = true
		d := editDistance(lw, strings.ToLower(k))
		if d > len([]rune(want))/2+1 && !strings.Contains(strings.ToLower(k), lw) {
			continue
		}
		cs = append(cs, cand{k, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// suggestion is " (did you mean a or b?)", " (known: …)" when nothing is
// close, or "" when nothing is known.
func suggestion(want string, known []string) string {
	if near := nearest(want, known, 3); len(near) > 0 {
		return fmt.Sprintf("; did you mean %s?", strings.Join(quoteAll(near), " or "))
	}
	if len(known) == 0 {
		return ""
	}
	shown := known
	if len(shown) > 5 {
		shown = shown[:5]
	}
	more := ""
	if len(known) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(known)-len(shown))
	}
	return fmt.Sprintf("; known: %s%s", strings.Join(quoteAll(shown), ", "), more)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// checkMemoryKey fails when no chat or memory has the (card, space) pair,
// suggesting the nearest known spaces of the card (or cards of the space).
func checkMemoryKey(keys []models.MemoryKey, card, space string) error {
	var spaces, cardsInSpace, allCards []string
	for _, k := range keys {
		if k.CardID == card && k.SpaceID == space {
			return nil
		}
		if k.CardID == card {
			spaces = append(spaces, k.SpaceID)
		}
		if k.SpaceID == space {
			cardsInSpace = append(cardsInSpace, k.CardID)
		}
		allCards = append(allCards, k.CardID)
	}
	switch {
	case len(spaces) > 0:
		return usageError{fmt.Errorf("card %q has no chat or memory in space %q%s (ids keep case; troupe memory show lists every pair)", card, space, suggestion(space, spaces))}
	case len(cardsInSpace) > 0:
		return usageError{fmt.Errorf("space %q has no chat or memory of card %q%s (ids keep case; troupe memory show lists every pair)", space, card, suggestion(card, cardsInSpace))}
	}
	var allSpaces []string
	for _, k := range keys {
		allSpaces = append(allSpaces, k.SpaceID)
	}
	return usageError{fmt.Errorf("no chat or memory of card %q%s, nor in space %q%s (ids keep case; troupe memory show lists every pair)",
		card, suggestion(card, allCards), space, suggestion(space, allSpaces))}
}

// checkFolder fails when dir is not a folder, suggesting the nearest
// folders beside where it should be.
func checkFolder(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s is a file, not a folder", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	entries, rerr := os.ReadDir(parent)
	if rerr != nil {
		return fmt.Errorf("no folder %s (nor %s)", dir, parent)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(parent, e.Name()))
		}
	}
	if near := nearest(filepath.Clean(dir), dirs, 3); len(near) > 0 {
		return fmt.Errorf("no folder %s; did you mean %s?", dir, strings.Join(near, " or "))
	}
	return fmt.Errorf("no folder %s", dir)
}
