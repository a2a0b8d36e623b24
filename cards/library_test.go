package cards_test

import (
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest"
)

// TestLibrarySkipsWhatDoesNotLoad: the good cards of a folder load in every
// format (two with one stem each under an id of its own); each bad file is
// listed with why, and worlds/ is not looked into.
func TestLibrarySkipsWhatDoesNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pic := cardstest.Picture(t, 2, 2, color.Gray{})
	files := map[string][]byte{
		"maren.json":       []byte(`{"spec":"chara_card_v2","data":{"name":"Maren","first_mes":"Hello."}}`),
		"wren.PNG":         cardstest.PNG(t, pic, cardstest.CardChunk("chara", v2Card)),
		"ivy.charx":        cardstest.CHARX(t, map[string][]byte{"card.json": []byte(charxCard)}),
		"broken.json":      []byte(`{"name":`),
		"index.json":       []byte(`[{"filename":"a.png"}]`),
		"photo.png":        pic,
		"maren.png":        cardstest.PNG(t, pic, cardstest.CardChunk("chara", v3Card)),
		"notes.txt":        []byte("not looked at"),
		"worlds/town.json": []byte(`{"entries":{"0":{"key":["town"],"content":"A town."}}}`),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := cards.LoadLibrary(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range lib.List() {
		ids = append(ids, c.ID+":"+c.Format)
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != "ivy:charx maren-json:json maren-png:png wren:png" {
		t.Errorf("loaded %v", ids)
	}
	why := map[string]string{}
	for _, f := range lib.Failed() {
		why[filepath.Base(f.Path)] = f.Err.Error()
	}
	for file, want := range map[string]string{
		"broken.json": "not JSON",
		"index.json":  "not a card",
		"photo.png":   "no chara or ccv3",
	} {
		if !strings.Contains(why[file], want) {
			t.Errorf("%s: failure %q, want it to say %q", file, why[file], want)
		}
	}
	if len(why) != 3 {
		t.Errorf("failures: %v", why)
	}
	// A default card that did not load says why.
	if _, err := cards.LoadLibrary(dir, "broken"); !errors.Is(err, cards.ErrNoDefault) || !errors.Is(err, cards.ErrCardInvalid) || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("default broken: %v", err)
	}
	if _, err := cards.LoadLibrary(dir, "nobody"); !errors.Is(err, cards.ErrNoDefault) || !strings.Contains(err.Error(), "not in the library") {
		t.Errorf("default missing: %v", err)
	}
	if lib, err := cards.LoadLibrary(filepath.Join(dir, "absent"), ""); err != nil || len(lib.List()) != 0 {
		t.Errorf("a folder that is not there: %v", err)
	}
	if _, err := cards.LoadLibrary(filepath.Join(dir, "maren.json"), ""); err == nil {
		t.Errorf("a file as the folder: no error")
	}
	if _, err := cards.LoadCard(filepath.Join(dir, "worlds")); !errors.Is(err, cards.ErrNotCard) {
		t.Errorf("a folder as a card: %v", err)
	}
}

// TestLenientFields: values SillyTavern takes are taken.
func TestLenientFields(t *testing.T) {
	t.Parallel()
	c, err := cards.ParseCard([]byte("\xEF\xBB\xBF" + `{"spec":"chara_card_v2","data":{"name":42,"description":true,"tags":"solo",` +
		`"alternate_greetings":["a",7],"character_version":1.5,"mes_example":"<START>\nA\n<start>\n\nB\n<START>",` +
		`"extensions":{"group_greetings":"All of you!","depth_prompt":{"prompt":"Stay calm.","depth":"3","role":"User"},"world":"Eldoria"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "42" || c.Description != "true" || len(c.Tags) != 1 || c.AlternateGreetings[1] != "7" || c.CharacterVersion != "1.5" {
		t.Errorf("card = %+v", c)
	}
	if len(c.Examples) != 2 || c.Examples[0] != "A" || c.Examples[1] != "B" {
		t.Errorf("examples = %q", c.Examples)
	}
	if c.DepthPrompt == nil || *c.DepthPrompt != (cards.DepthPrompt{Prompt: "Stay calm.", Depth: 3, Role: "user"}) {
		t.Errorf("depth prompt = %+v", c.DepthPrompt)
	}
	if len(c.GroupGreetings) != 1 || c.World != "Eldoria" {
		t.Errorf("group greetings %q, world %q", c.GroupGreetings, c.World)
	}
	for name, body := range map[string]string{
		"name an object":   `{"name":{"a":1}}`,
		"greetings object": `{"name":"X","alternate_greetings":{"a":"b"}}`,
		"bad depth role":   `{"name":"X","extensions":{"depth_prompt":{"prompt":"p","role":"narrator"}}}`,
		"depth not number": `{"name":"X","extensions":{"depth_prompt":{"prompt":"p","depth":"deep"}}}`,
	} {
		if _, err := cards.ParseCard([]byte(body)); !errors.Is(err, cards.ErrCardInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLibraryGivesFilesOfOneStemTheirOwnIDs: two card files with one stem
// (two formats in one folder, or two spellings of one name) both load,
// each under an id of its own that does not depend on the order the
// files come in and is the same at every load; a file whose stem is its
// own keeps it. A file from elsewhere with a stem the library has gets
// an id of its own too, and a file of the folder is the library's card.
func TestLibraryGivesFilesOfOneStemTheirOwnIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pic := cardstest.Picture(t, 2, 2, color.Gray{})
	wren := func(desc string) []byte {
		return []byte(`{"spec":"chara_card_v2","data":{"name":"Wren","description":"` + desc + `","first_mes":"Hello."}}`)
	}
	files := map[string][]byte{
		"wren.json":  wren("the ferry pilot"),
		"wren.png":   cardstest.PNG(t, pic, cardstest.CardChunk("chara", `{"spec":"chara_card_v2","data":{"name":"Wren","description":"the locksmith"}}`)),
		"Ivy.json":   []byte(`{"name":"Ivy","description":"upper"}`),
		"ivy.json":   []byte(`{"name":"Ivy","description":"lower"}`),
		"maren.json": []byte(`{"name":"Maren"}`),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := cards.LoadLibrary(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.Failed()) != 0 {
		t.Errorf("skipped: %v", lib.Failed())
	}
	byFile := map[string]cards.Card{}
	for _, c := range lib.List() {
		src, ok := lib.Source(c.ID)
		if !ok {
			t.Fatalf("card %s has no source", c.ID)
		}
		byFile[filepath.Base(src.File)] = c
	}
	if len(byFile) != len(files) {
		t.Fatalf("loaded %d cards, want %d: %v", len(byFile), len(files), byFile)
	}
	for file, want := range map[string]string{"wren.json": "wren-json", "wren.png": "wren-png", "maren.json": "maren"} {
		if got := byFile[file].ID; got != want {
			t.Errorf("%s: id %q, want %q", file, got, want)
		}
	}
	if byFile["wren.json"].Description != "the ferry pilot" || byFile["wren.png"].Description != "the locksmith" {
		t.Errorf("the ids name the wrong cards: %+v", byFile)
	}
	upper, lower := byFile["Ivy.json"].ID, byFile["ivy.json"].ID
	if upper == lower || !strings.HasPrefix(upper, "ivy-") || !strings.HasPrefix(lower, "ivy-") {
		t.Errorf("Ivy.json and ivy.json: ids %q and %q, want two ivy-… ids", upper, lower)
	}
	if src, _ := lib.Source("wren-png"); src.SharedStem != "wren" {
		t.Errorf("wren.png's source %+v, want the shared stem wren", src)
	}
	if src, _ := lib.Source("maren"); src.SharedStem != "" {
		t.Errorf("maren.json's source %+v, want no shared stem", src)
	}

	// The same files in any order, and at the next load, get the same ids.
	names := []string{"wren.png", "maren.json", "ivy.json", "wren.json", "Ivy.json"}
	want := cards.FileIDs(names)
	for i := range names {
		rot := append(append([]string(nil), names[i:]...), names[:i]...)
		sort.Sort(sort.Reverse(sort.StringSlice(rot[:i])))
		got := cards.FileIDs(rot)
		for n, id := range want {
			if got[n] != id {
				t.Errorf("order %v: %s is %q, want %q", rot, n, got[n], id)
			}
		}
	}
	again, err := cards.LoadLibrary(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range lib.List() {
		if c2, ok := again.Get(c.ID); !ok || c2.Description != c.Description {
			t.Errorf("the next load has %s as %+v", c.ID, c2)
		}
	}

	// A name two cards share finds neither; their ids do.
	if c, ok := lib.Find("Wren"); ok {
		t.Errorf("Find(Wren) = %s, want no card: two have that name", c.ID)
	}
	if c, ok := lib.Find("WREN-PNG"); !ok || c.Description != "the locksmith" {
		t.Errorf("Find(WREN-PNG) = %+v %v", c, ok)
	}
	if _, err := cards.LoadLibrary(dir, "Wren"); !errors.Is(err, cards.ErrNoDefault) || !strings.Contains(err.Error(), "wren-json, wren-png") {
		t.Errorf("default Wren: %v", err)
	}

	// Files named on the command line.
	other := filepath.Join(t.TempDir(), "wren.json")
	if err := os.WriteFile(other, wren("the cartographer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := lib.AddFile(filepath.Join(dir, "wren.png")); err != nil || c.ID != "wren-png" {
		t.Errorf("AddFile of the folder's wren.png: %q %v", c.ID, err)
	}
	c, err := lib.AddFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == "wren" || c.ID == "wren-json" || !strings.HasPrefix(c.ID, "wren-") || c.Description != "the cartographer" {
		t.Errorf("AddFile of another wren.json: id %q (%s)", c.ID, c.Description)
	}
	if got, _ := lib.Get("wren-json"); got.Description != "the ferry pilot" {
		t.Errorf("AddFile replaced the folder's wren.json: %+v", got)
	}
	if c2, err := lib.AddFile(other); err != nil || c2.ID != c.ID {
		t.Errorf("AddFile again: %q %v, want %q", c2.ID, err, c.ID)
	}
	solo := filepath.Join(t.TempDir(), "rook.json")
	if err := os.WriteFile(solo, []byte(`{"name":"Rook"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := lib.AddFile(solo); err != nil || c.ID != "rook" {
		t.Errorf("AddFile of a stem the library lacks: %q %v, want rook", c.ID, err)
	}
}
