package cards_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"troupe/cards"
)

func off() *bool { f := false; return &f }

func TestLorebookActivation(t *testing.T) {
	t.Parallel()
	entries := []cards.LoreEntry{
		{Name: "lamp", Keys: []string{"lamp", "lantern"}, Content: "The lamp burns whale oil; {{char}} trims it at dusk.", InsertionOrder: 20},
		{Name: "brother", Keys: []string{"Tomas"}, Content: "Tomas, {{char}}'s brother, was lost in the storm of '09.", InsertionOrder: 10, CaseSensitive: true},
		{Name: "boat", Keys: []string{"boat"}, Content: "The boat is hidden in the north cove.", Selective: true, SecondaryKeys: []string{"cove", "hidden"}},
		{Name: "rule", Content: "The sea always answers a question with a question.", Constant: true, InsertionOrder: 99},
		{Name: "off", Keys: []string{"lamp"}, Content: "never shown", Enabled: off()},
		{Name: "empty", Keys: []string{"lamp"}, Content: "   "},
		{Name: "whale", Keys: []string{"whale"}, Content: "Whales sing near the rocks in spring.", InsertionOrder: 30},
	}
	tests := []struct {
		name      string
		book      cards.CharacterBook
		messages  []string
		want      []string // entry names, in the order they must appear
		notWanted []string
	}{
		{"a key in any case", cards.CharacterBook{Entries: entries}, []string{"Is the LANTERN lit?"}, []string{"lamp", "rule"}, []string{"off"}},
		{"case-sensitive key", cards.CharacterBook{Entries: entries}, []string{"what about tomas?"}, []string{"rule"}, []string{"brother"}},
		{"case-sensitive key, right case", cards.CharacterBook{Entries: entries}, []string{"What about Tomas? And the lamp?"}, []string{"brother", "lamp", "rule"}, nil},
		{"selective needs a second key", cards.CharacterBook{Entries: entries}, []string{"Where is the boat?"}, []string{"rule"}, []string{"boat"}},
		{"selective with its second key", cards.CharacterBook{Entries: entries}, []string{"Is the boat in the cove?"}, []string{"boat", "rule"}, nil},
		{"only the latest messages are scanned", cards.CharacterBook{Entries: entries, ScanDepth: 2},
			[]string{"the lamp", "quiet", "more quiet"}, []string{"rule"}, []string{"lamp"}},
		{"recursive: an entry's text calls up another", cards.CharacterBook{Entries: entries, Recursive: true}, []string{"the lamp"}, []string{"lamp", "whale", "rule"}, nil},
		{"not recursive", cards.CharacterBook{Entries: entries}, []string{"the lamp"}, []string{"lamp", "rule"}, []string{"whale"}},
	}
	names := map[string]string{}
	for _, e := range entries {
		names[e.Name] = strings.ReplaceAll(e.Content, "{{char}}", "Maren")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.book.Activate(tt.messages, "Maren", "Ada")
			var want []string
			for _, n := range tt.want {
				want = append(want, names[n])
			}
			if !slices.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			for _, n := range tt.notWanted {
				if slices.Contains(got, names[n]) {
					t.Errorf("%s activated", n)
				}
			}
		})
	}
}

func TestLorebookBudgetKeepsHigherPriorities(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("The harbour keeps its own records of every ship. ", 20)
	book := cards.CharacterBook{TokenBudget: 300, Entries: []cards.LoreEntry{
		{Name: "a", Keys: []string{"ship"}, Content: "A: " + long, InsertionOrder: 1, Priority: 1},
		{Name: "b", Keys: []string{"ship"}, Content: "B: " + long, InsertionOrder: 2, Priority: 5},
		{Name: "c", Keys: []string{"ship"}, Content: "C: a short note.", InsertionOrder: 3, Priority: 0},
	}}
	got := book.Activate([]string{"a ship!"}, "Maren", "Ada")
	if len(got) != 2 || !strings.HasPrefix(got[0], "B: ") || got[1] != "C: a short note." {
		t.Errorf("got %d entries %.40q; want B (higher priority) then C, A left out", len(got), got)
	}
}

func TestCardWithLorebookLoadsOrSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	card := func(book string) []byte {
		return []byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Maren","description":"A keeper.","first_mes":"Hello.","character_book":` + book + `}}`)
	}
	c, err := cards.ParseCard(card(`{"scan_depth":3,"entries":[{"keys":["lamp"],"content":"Whale oil.","insertion_order":1,"enabled":true}]}`))
	if err != nil || c.Book == nil || len(c.Book.Entries) != 1 || c.Book.ScanDepth != 3 {
		t.Fatalf("card = %+v, %v", c.Book, err)
	}
	for name, book := range map[string]string{
		"negative scan depth":   `{"scan_depth":-1,"entries":[]}`,
		"negative token budget": `{"token_budget":-5,"entries":[]}`,
		"keys not a list":       `{"entries":[{"keys":"lamp","content":"x"}]}`,
	} {
		if _, err := cards.ParseCard(card(book)); !errors.Is(err, cards.ErrCardInvalid) {
			t.Errorf("%s: err = %v, want ErrCardInvalid", name, err)
		} else if !strings.Contains(err.Error(), "character_book") && !strings.Contains(err.Error(), "keys") {
			t.Errorf("%s: the error does not say where: %v", name, err)
		}
	}
}
