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
// format; each bad file is listed with why, and worlds/ is not looked into.
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
	if strings.Join(ids, " ") != "ivy:charx maren:json wren:png" {
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
		"maren.png":   `the id "maren" is taken by maren.json`,
	} {
		if !strings.Contains(why[file], want) {
			t.Errorf("%s: failure %q, want it to say %q", file, why[file], want)
		}
	}
	if len(why) != 4 {
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
