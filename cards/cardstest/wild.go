// Package cardstest finds the cards collected from public repositories that
// the tests play (../shared/cards-wild, next to the checkout; never copied
// into it).
package cardstest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"troupe/cards"
)

// WildDir returns the cards-wild folder: $TROUPE_CARDS_WILD, else
// shared/cards-wild in the nearest folder above the working directory that
// has one (from /work/main or a worktree under /work/wt it is
// /work/shared/cards-wild). The test fails, naming where it looked, when
// there is none.
func WildDir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("TROUPE_CARDS_WILD"); d != "" {
		if _, err := os.Stat(d); err != nil {
			tb.Fatalf("TROUPE_CARDS_WILD: %v", err)
		}
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "cards-wild")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	tb.Fatalf("no shared/cards-wild folder above %s: put the collected cards there (see the repository's README) or set TROUPE_CARDS_WILD", wd)
	return ""
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
