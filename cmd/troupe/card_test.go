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
	"troupe/llm/openaitest"
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

// TestChatPlaysAPNGCard plays a collected PNG card in the console, with a
// folder beside it holding a file that is no card: the chat goes on and the
// log names the file.
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
	card := filepath.Join(cardstest.WildDir(t), "st-seraphina.png")
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := run(ctx, []string{"chat", "--card", card, "--user", "Ada", "--drain-timeout", "5s"},
		strings.NewReader("Hello there.\n"), &out, &errOut, testEnv(vals))
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "Seraphina") || strings.Count(out.String(), "openaitest model") != 1 {
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
