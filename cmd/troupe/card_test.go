package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"troupe/cards"
	"troupe/cards/cardstest"
	"troupe/fakes/openaitest"
)

func runCard(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"card"}, args...), strings.NewReader(""), &out, &errOut, testEnv(nil))
	return out.String(), errOut.String(), err
}

// TestCardCommands lists a folder with cards of each format and files that
// are no cards, shows a card, imports files and exports a card that imports
// back the same.
func TestCardCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keeper, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	pic := cardstest.Picture(t, 2, 2, color.Gray{Y: 7})
	for name, data := range map[string][]byte{
		"lantern-keeper.json": keeper,
		"wren.png": cardstest.PNG(t, pic, cardstest.CardChunk("ccv3",
			`{"spec":"chara_card_v3","data":{"name":"Wren","nickname":"Pilot","first_mes":"Hi {{user}}, {{char}} here.","alternate_greetings":["Yo."],"mes_example":"<START>\nA: b"}}`)),
		"index.json": []byte(`[{"filename":"x.png"}]`),
		"bad.charx":  []byte("PK\x03\x04 broken"),
	} {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	out, _, err := runCard(t, "list", "--dir", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Cards  []cardLine
		Failed []failedLine
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(list.Cards) != 2 || list.Cards[1].ID != "wren" || list.Cards[1].Format != "png" || list.Cards[1].Spec != "v3" || list.Cards[1].Greetings != 2 {
		t.Errorf("cards = %+v", list.Cards)
	}
	if len(list.Failed) != 2 || list.Failed[0].File != "bad.charx" || !strings.Contains(list.Failed[1].Error, "not a card") {
		t.Errorf("failed = %+v", list.Failed)
	}
	out, _, err = runCard(t, "list", "--dir", dir)
	if err != nil || !strings.Contains(out, "index.json: cards: invalid card: not a card") || !strings.Contains(out, "wren ") {
		t.Errorf("list: %v\n%s", err, out)
	}

	out, _, err = runCard(t, "show", "--dir", dir, "wren", "--user", "Ada")
	if err != nil || !strings.Contains(out, "Hi Ada, Pilot here.") || !strings.Contains(out, "example dialogue 1 of 1\nA: b") {
		t.Errorf("show: %v\n%s", err, out)
	}
	var usage usageError
	if _, _, err := runCard(t, "show", "--dir", dir, "nobody"); !errors.As(err, &usage) || !strings.Contains(err.Error(), "no card") {
		t.Errorf("show nobody: %v", err)
	}

	lib := t.TempDir()
	out, errOut, err := runCard(t, "import", "--dir", lib, filepath.Join(dir, "wren.png"), filepath.Join(dir, "index.json"))
	if err == nil || !strings.Contains(out, "imported as wren") || !strings.Contains(errOut, "index.json: not imported") {
		t.Errorf("import: %v\n%s\n%s", err, out, errOut)
	}

	exported := filepath.Join(t.TempDir(), "wren-out.png")
	if _, _, err := runCard(t, "export", "--dir", lib, "wren", "--format", "png", "--out", exported); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCard(t, "export", "--dir", lib, "wren", "--format", "png", "--out", exported); err == nil {
		t.Errorf("export over an existing file: no error")
	}
	if _, _, err := runCard(t, "export", "--dir", lib, "wren", "--format", "gif"); !errors.As(err, &usage) {
		t.Errorf("--format gif: %v", err)
	}
	again := t.TempDir()
	if _, _, err := runCard(t, "import", "--dir", again, exported); err != nil {
		t.Fatal(err)
	}
	a, _ := cards.LoadCard(filepath.Join(lib, "wren.png"))
	b, err := cards.LoadCard(filepath.Join(again, "wren-out.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*cards.Card{&a, &b} {
		c.ID, c.Spec, c.Raw = "", "", nil
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("export then import changed the card:\n%+v\n%+v", a, b)
	}
}

// TestChatPlaysAPNGCard plays a PNG card in the console, with a folder
// beside it holding a file that is no card: the chat goes on and the log
// names the file.
func TestChatPlaysAPNGCard(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.json"), []byte(`[1]`), 0o644)
	vals := map[string]string{
		"TROUPE_DATABASE_DSN":   "sqlite://" + filepath.Join(t.TempDir(), "troupe.db"),
		"TROUPE_MODEL_BASE_URL": fake.URL(),
		"TROUPE_CARDS_DIR":      dir,
		"TROUPE_LOG_LEVEL":      "warn",
	}
	card := filepath.Join(filepath.Dir(cardstest.OwnFiles(t)[0]), "own-chara.png")
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := run(ctx, []string{"chat", "--card", card, "--user", "Ada", "--drain-timeout", "5s"},
		strings.NewReader("Hello there.\n"), &out, &errOut, testEnv(vals))
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "Wren") || strings.Count(out.String(), "openaitest model") != 1 {
		t.Errorf("console output:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "card file skipped") || !strings.Contains(errOut.String(), "index.json") {
		t.Errorf("the log does not name the file that is no card:\n%s", errOut.String())
	}
}

// TestServeNamesABrokenDefaultCard: serve exits 2 when cards.default names a
// card whose file does not load, saying why; other bad files only log.
func TestServeNamesABrokenDefaultCard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"name":`), 0o644)
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"serve"}, strings.NewReader(""), io.Discard, &errOut,
		testEnv(map[string]string{"TROUPE_CARDS_DIR": dir, "TROUPE_CARDS_DEFAULT": "broken"}))
	if code := exitCode(err, &errOut); code != 2 || !strings.Contains(errOut.String(), "cards.default") || !strings.Contains(errOut.String(), "not JSON") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

// TestCardShowWorldsAndWarnings: card show finds the world a card links in
// a worlds/ folder beside the card folder, says which of the card's own
// entries it shares, and lists as warnings a linked world that is not found
// and a regex key that does not compile, naming its entry.
func TestCardShowWorldsAndWarnings(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	chars := filepath.Join(root, "characters")
	os.MkdirAll(filepath.Join(root, "worlds"), 0o755)
	os.MkdirAll(chars, 0o755)
	os.WriteFile(filepath.Join(chars, "wren.json"), cardstest.Own(t, "v2.json"), 0o644)
	os.WriteFile(filepath.Join(root, "worlds", "Harbor.json"), cardstest.Own(t, "worlds/Harbor.json"), 0o644)
	os.WriteFile(filepath.Join(chars, "lost.json"), []byte(`{"spec":"chara_card_v2","data":{"name":"Lost","first_mes":"Hm.",
		"extensions":{"world":"Atlantis"},"character_book":{"entries":[{"id":3,"comment":"wolves","keys":["/wolf(?=pack/i"],"content":"Wolves."}]}}}`), 0o644)

	out, _, err := runCard(t, "show", "--dir", chars, "wren")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Harbor: 2 entries, from " + filepath.Join(root, "worlds", "Harbor.json"),
		"1 of the card's own 2 lore entries are the world's too"} {
		if !strings.Contains(out, want) {
			t.Errorf("show wren does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "== warnings") {
		t.Errorf("warnings for a card without a problem:\n%s", out)
	}
	out, _, err = runCard(t, "show", "--dir", chars, "lost")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== warnings", `the card links the world "Atlantis", which is not in ` + filepath.Join(chars, "worlds"),
		`card lore: entry 3 ("wolves"): key /wolf(?=pack/i is taken as plain text`} {
		if !strings.Contains(out, want) {
			t.Errorf("show lost does not say %q:\n%s", want, out)
		}
	}
}

// TestCardImportWorld: card import takes a world-info file into the worlds
// folder (beside the card folder when that is where it is), under its file
// name or --as; again is a no-op, and another world under a taken name is
// refused. The imported world is then the one card show finds.
func TestCardImportWorld(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	chars, worlds := filepath.Join(root, "characters"), filepath.Join(root, "worlds")
	os.MkdirAll(chars, 0o755)
	os.MkdirAll(worlds, 0o755)
	src := t.TempDir()
	world := filepath.Join(src, "harbor-worldinfo.json")
	os.WriteFile(world, cardstest.Own(t, "worlds/Harbor.json"), 0o644)
	card := filepath.Join(src, "wren.json")
	os.WriteFile(card, cardstest.Own(t, "v2.json"), 0o644)

	out, errOut, err := runCard(t, "import", "--dir", chars, card, world)
	if err != nil || !strings.Contains(out, "wren.json: imported as wren (Wren)") ||
		!strings.Contains(out, "harbor-worldinfo.json: imported as world harbor-worldinfo (2 entries) in "+filepath.Join(worlds, "harbor-worldinfo.json")) {
		t.Fatalf("import: %v\n%s\n%s", err, out, errOut)
	}
	if out, _, err := runCard(t, "import", "--dir", chars, "--as", "Harbor", world); err != nil || !strings.Contains(out, "imported as world Harbor") {
		t.Fatalf("import --as: %v\n%s", err, out)
	}
	if _, _, err := runCard(t, "import", "--dir", chars, "--as", "Harbor", world); err != nil {
		t.Errorf("importing the same world again: %v", err)
	}
	other := filepath.Join(src, "other.json")
	os.WriteFile(other, []byte(`{"entries":{"0":{"key":["x"],"content":"y"}}}`), 0o644)
	if _, errOut, err := runCard(t, "import", "--dir", chars, "--world", "--as", "Harbor", other); err == nil || !strings.Contains(errOut, "holds a different world") {
		t.Errorf("another world under a taken name: %v\n%s", err, errOut)
	}
	if _, errOut, err := runCard(t, "import", "--dir", chars, "--world", card); err == nil || !strings.Contains(errOut, "not imported") {
		t.Errorf("a card taken as a world: %v\n%s", err, errOut)
	}
	out, _, err = runCard(t, "show", "--dir", chars, "wren")
	if err != nil || !strings.Contains(out, "Harbor: 2 entries, from "+filepath.Join(worlds, "Harbor.json")) {
		t.Errorf("show after import: %v\n%s", err, out)
	}
}
