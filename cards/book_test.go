package cards

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/cards/cardstest/wilddir"
)

// wild reads a file of the real cards folder (outside the repository; see
// wilddir.Dir: without it the test skips, unless CI says it must be there).
func wild(t testing.TB, name string) []byte {
	t.Helper()
	return wilddir.File(t, name)
}

func TestParseBookWorldInfoFile(t *testing.T) {
	t.Parallel()
	b, err := ParseBook(wild(t, "st-eldoria-worldinfo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(b.Entries); got != 4 {
		t.Fatalf("got %d entries, want 4", got)
	}
	e := b.Entries[0]
	if e.UID != "0" || len(e.Keys) != 4 || e.Keys[0] != "eldoria" || e.Order != 100 || e.Position != BeforeChar || !e.Enabled {
		t.Errorf("first entry read as %+v", e)
	}
	if !b.MatchWholeWords {
		t.Error("whole words are not the default")
	}
}

func TestParseBookLenient(t *testing.T) {
	t.Parallel()
	raw := `{"name":"L","scan_depth":"3","recursive_scanning":"true","entries":{
	 "7":{"key":"lamp, lantern","keysecondary":["oil",12],"selectiveLogic":"3","order":"12.5","position":4,"depth":"2","role":1,
	      "disable":false,"probability":"40","useProbability":true,"group":"light,fire","groupWeight":5,"sticky":2,"cooldown":"1","delay":3,
	      "excludeRecursion":1,"preventRecursion":true,"delayUntilRecursion":false,"scanDepth":6,"caseSensitive":true,"matchWholeWords":false,
	      "characterFilter":{"isExclude":true,"names":["Ada"]},"content":"@@depth 1\n@@role assistant\n@@dont_activate\nThe lamp."},
	 "2":{"key":["x"],"content":"two","disable":true}}}`
	b, err := ParseBook([]byte("\xef\xbb\xbf" + raw))
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "L" || b.ScanDepth != 3 || !b.Recursive || len(b.Entries) != 2 {
		t.Fatalf("book read as %+v", b)
	}
	if b.Entries[0].UID != "2" || b.Entries[0].Enabled {
		t.Errorf("entries are not in uid order or disable was lost: %+v", b.Entries[0])
	}
	e := b.Entries[1]
	checks := []struct {
		what string
		ok   bool
	}{
		{"keys from a comma string", len(e.Keys) == 2 && e.Keys[1] == "lantern"},
		{"secondary from mixed list", len(e.Secondary) == 2 && e.Secondary[1] == "12" && e.Selective},
		{"logic", e.Logic == AndAll},
		{"fractional order", e.Order == 12.5 && e.Priority == 12.5},
		{"decorator depth wins", e.Position == AtDepth && e.Depth == 1},
		{"decorator role", e.Role == RoleAssistant},
		{"dont_activate", e.DontActivate},
		{"decorators removed", e.Content == "The lamp."},
		{"probability", e.Probability == 40 && e.UseProbability},
		{"groups", len(e.Groups) == 2 && e.Groups[1] == "fire" && e.GroupWeight == 5},
		{"timers", e.Sticky == 2 && e.Cooldown == 1 && e.Delay == 3},
		{"recursion flags", e.ExcludeRecursion && e.PreventRecursion && !e.DelayUntilRecursion},
		{"scan depth", e.ScanDepth == 6},
		{"case and words", e.CaseSensitive != nil && *e.CaseSensitive && e.MatchWholeWords != nil && !*e.MatchWholeWords},
		{"character filter", e.FilterExclude && len(e.CharacterFilter) == 1},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: entry read as %+v", c.what, e)
		}
	}
}

func TestParseBookCharacterBookExtensions(t *testing.T) {
	t.Parallel()
	raw := `{"entries":[{"id":3,"keys":["a"],"content":"x","insertion_order":5,"priority":9,"position":"after_char",
	  "extensions":{"position":6,"selectiveLogic":1,"sticky":null,"role":null,"depth":4,"match_whole_words":null}},
	 {"keys":["b"],"content":"y","position":"after_char"}]}`
	b, err := ParseBook([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if e := b.Entries[0]; e.UID != "3" || e.Position != ExamplesBottom || e.Logic != NotAll || e.Priority != 9 || e.Sticky != 0 || e.MatchWholeWords != nil {
		t.Errorf("extensions not applied: %+v", e)
	}
	if e := b.Entries[1]; e.UID != "1" || e.Position != AfterChar {
		t.Errorf("V2 position not read: %+v", e)
	}
}

func TestParseBookRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`[]`, `{"entries": 3}`, `{"entries":[1]}`, `nope`} {
		if _, err := ParseBook([]byte(raw)); !errors.Is(err, ErrBook) {
			t.Errorf("ParseBook(%s): got %v, want ErrBook", raw, err)
		}
	}
}

func TestLoadWorlds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, WorldsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, WorldsDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	harbor, err := os.ReadFile(filepath.Join("cardstest", "own", "worlds", "Harbor.json"))
	if err != nil {
		t.Fatal(err)
	}
	write("Eldoria.json", harbor)
	write("broken.json", []byte(`{"entries": 7}`))
	write("notes.txt", []byte("not a world"))
	w, errs := LoadWorlds(dir)
	if len(errs) != 1 || !errors.Is(errs[0], ErrBook) || !strings.Contains(errs[0].Error(), "broken.json") {
		t.Errorf("errors: got %v, want one naming broken.json", errs)
	}
	b, ok := w.Get("eldoria")
	if !ok || b.Name != "Eldoria" || len(b.Entries) != 2 {
		t.Fatalf("Get(eldoria): %v %+v", ok, b)
	}
	if _, ok := w.Get("broken"); ok {
		t.Error("a world that did not load is served")
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o644); err != nil || os.Truncate(huge, maxBookFile+1) != nil {
		t.Fatal("cannot make a sparse file")
	}
	if _, err := ReadBookFile(huge); !errors.Is(err, ErrBook) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over the limit: %v", err)
	}
	if w, errs := LoadWorlds(filepath.Join(dir, "nowhere", "deeper")); len(errs) != 0 || w == nil {
		t.Errorf("a missing folder: %v", errs)
	}
}

func TestBookJSONRoundTrip(t *testing.T) {
	t.Parallel()
	raw := `{"name":"R","entries":{"3":{"uid":3,"key":["a"],"keysecondary":["b"],"selectiveLogic":2,"content":"x","order":7,"position":4,"depth":2,"role":2,"group":"g,h","sticky":1,"scanDepth":3,"characterFilter":{"names":["M"]},"extra_field":true}}}`
	b, err := ParseBook([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := json.Marshal(b)
	if err != nil || !strings.Contains(string(kept), `"extra_field":true`) {
		t.Fatalf("a read book is not written back as read: %s (%v)", kept, err)
	}
	built := *b
	built.raw = nil
	data, err := json.Marshal(&built)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseBook(data)
	if err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	e, f := b.Entries[0], again.Entries[0]
	if e.UID != f.UID || e.Logic != f.Logic || e.Order != f.Order || e.Position != f.Position || e.Depth != f.Depth ||
		e.Role != f.Role || strings.Join(e.Groups, ",") != strings.Join(f.Groups, ",") || e.Sticky != f.Sticky || e.ScanDepth != f.ScanDepth {
		t.Errorf("round trip:\n%+v\n%+v", e, f)
	}
}

// TestWorldsBesideTheCardFolder: world files are found in worlds/ inside
// the card folder and in worlds/ beside it, as SillyTavern keeps them
// (characters/ and worlds/ side by side); inside wins a name both hold;
// cards.worlds_dir replaces both.
func TestWorldsBesideTheCardFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	chars := filepath.Join(root, "characters")
	for path, content := range map[string]string{
		"worlds/Harbor.json":            `{"entries":{"0":{"key":["quay"],"content":"beside"}}}`,
		"worlds/Shared.json":            `{"entries":{"0":{"key":["x"],"content":"beside"}}}`,
		"characters/worlds/Shared.json": `{"entries":{"0":{"key":["x"],"content":"inside"}}}`,
		"elsewhere/Other.json":          `{"entries":{"0":{"key":["y"],"content":"set"}}}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, errs := LoadWorlds(chars)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := strings.Join(w.Names(), ","); got != "Harbor,Shared" {
		t.Fatalf("worlds: %s", got)
	}
	if b, _ := w.Get("shared"); b.Entries[0].Content != "inside" {
		t.Errorf("the world beside won over the one inside")
	}
	if p := w.Path("Harbor"); p != filepath.Join(root, "worlds", "Harbor.json") {
		t.Errorf("Harbor read from %s", p)
	}
	w, _ = LoadWorldsFrom(WorldDirs(chars, filepath.Join(root, "elsewhere"))...)
	if got := strings.Join(w.Names(), ","); got != "Other" {
		t.Errorf("with worlds_dir set: %s", got)
	}
	if d := ImportWorldDir(filepath.Join(root, "empty"), ""); d != filepath.Join(root, "worlds") {
		t.Errorf("a world is imported into %s, not the worlds folder that is there", d)
	}
}

// TestBooksOfOneBookOnce: an entry that a card's book and its linked world
// both hold goes in once, as the world's; the rest of both go in; a linked
// world not found is named.
func TestBooksOfOneBookOnce(t *testing.T) {
	t.Parallel()
	world, err := ParseBook([]byte(`{"entries":{"0":{"uid":0,"key":["market","fish"],"content":"The market opens at four.\n"},
		"1":{"uid":1,"key":["quay"],"content":"The quay floods."}}}`))
	if err != nil {
		t.Fatal(err)
	}
	world.Name = "Harbor"
	own, err := ParseBook([]byte(`{"entries":[{"keys":["fish","market"],"content":"The market opens at four."},
		{"keys":["market"],"content":"The market opens at five."},{"keys":["gull"],"content":"Gulls."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorlds(world)
	books, missing := w.BooksOf(Card{Book: own, World: "harbor"})
	if missing != "" || len(books) != 2 || books[1] != world {
		t.Fatalf("books %v, missing %q", books, missing)
	}
	res := Activate(books, Scan{Messages: []string{"fish at the market by the quay, and a gull"}}, State{Turn: 1})
	got := contents(res)
	slices.Sort(got)
	want := []string{"Gulls.", "The market opens at five.", "The market opens at four.", "The quay floods."}
	if !slices.Equal(got, want) {
		t.Errorf("inserted %q, want %q", got, want)
	}
	for _, a := range res.Entries {
		if a.Content == "The market opens at four." && a.Book != "Harbor" {
			t.Errorf("the shared entry came from %q, not the world", a.Book)
		}
	}
	if len(own.Entries) != 3 {
		t.Error("the card's book was changed")
	}
	if again, _ := w.BooksOf(Card{Book: own, World: "Harbor"}); again[0] != books[0] {
		t.Error("the card's book without the shared entries is made again each turn")
	}
	_, missing = w.BooksOf(Card{Book: own, World: "Eldoria"})
	if missing != "Eldoria" {
		t.Errorf("missing world: %q", missing)
	}
}
