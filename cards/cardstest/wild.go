// Package cardstest builds small cards of every format for tests, and finds
// the real cards collected from public repositories that the tests also play
// when the folder is there (shared/cards-wild above the checkout, or
// $TROUPE_CARDS_WILD; never copied into the repository).
package cardstest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest/wilddir"
)

// WildDir returns the cards-wild folder (see wilddir.Dir): the test
// skips, saying why, when there is none, unless CI says it must be there.
func WildDir(tb testing.TB) string {
	tb.Helper()
	return wilddir.Dir(tb)
}

// WildFiles returns the files of WildDir, except its SOURCES.md, sorted.
func WildFiles(tb testing.TB) []string {
	tb.Helper()
	dir := WildDir(tb)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SOURCES.md" {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	if len(out) == 0 {
		tb.Fatalf("%s holds no cards", dir)
	}
	return out
}

// Features names what of the card format a card exercised.
func Features(c cards.Card) []string {
	out := []string{"format:" + c.Format, "spec:" + c.Spec}
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	add(c.Book != nil, fmt.Sprintf("book:%d", bookLen(c)))
	add(c.Nickname != "", "nickname")
	add(c.DepthPrompt != nil, "depth_prompt")
	add(c.SystemPrompt != "", "system_prompt")
	add(c.PostHistoryInstructions != "", "post_history")
	add(strings.Contains(c.SystemPrompt+c.PostHistoryInstructions, "{{original}}"), "{{original}}")
	add(len(c.AlternateGreetings) > 0, fmt.Sprintf("alternate_greetings:%d", len(c.AlternateGreetings)))
	add(len(c.GroupGreetings) > 0, fmt.Sprintf("group_greetings:%d", len(c.GroupGreetings)))
	add(len(c.Examples) > 1, fmt.Sprintf("examples:%d", len(c.Examples)))
	add(len(c.Image) > 0, "image")
	add(c.World != "", "world")
	add(strings.Contains(string(c.Raw), `"extensions"`), "extensions")
	return out
}

func bookLen(c cards.Card) int {
	if c.Book == nil {
		return 0
	}
	return len(c.Book.Entries)
}
