package cards_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest"
)

// sameData compares what two cards would play, and their picture when the
// first has one.
func sameData(t *testing.T, what string, a, b cards.Card) {
	t.Helper()
	if strings.HasSuffix(what, "png") && len(a.Image) > 0 && bytes.HasPrefix(a.Image, []byte("\x89PNG")) && !bytes.Equal(a.Image, b.Image) {
		t.Errorf("%s: the picture changed (%d bytes, then %d)", what, len(a.Image), len(b.Image))
	}
	for _, c := range []*cards.Card{&a, &b} {
		c.ID, c.Format, c.Spec, c.Raw, c.Image = "", "", "", nil, nil
	}
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.MarshalIndent(a, "", " ")
		jb, _ := json.MarshalIndent(b, "", " ")
		t.Errorf("%s: the card changed:\n%s\nthen\n%s", what, ja, jb)
	}
}

// TestExportImportRoundTrip exports every collected card as V3 JSON and as
// PNG, imports the file into a library folder and gets the same card; the
// fields troupe does not read come back too.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, cardstest.WildFiles(t))
}

// TestExportImportRoundTripOwn is TestExportImportRoundTrip over the
// project's own card of each format.
func TestExportImportRoundTripOwn(t *testing.T) {
	t.Parallel()
	roundTrip(t, cardstest.OwnFiles(t))
}

func roundTrip(t *testing.T, files []string) {
	for _, path := range files {
		orig, err := cards.LoadCard(path)
		if errors.Is(err, cards.ErrNotCard) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, lib := t.TempDir(), t.TempDir()
			js, err := orig.V3JSON()
			if err != nil {
				t.Fatal(err)
			}
			var png bytes.Buffer
			if err := orig.WritePNG(&png); err != nil {
				t.Fatal(err)
			}
			for ext, data := range map[string][]byte{".json": js, ".png": png.Bytes()} {
				file := filepath.Join(out, "exported"+ext)
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := cards.Import(lib, file)
				if err != nil {
					t.Fatal(err)
				}
				if got.Spec != "v3" || got.ID != "exported" {
					t.Errorf("%s: imported as %s, spec %s", ext, got.ID, got.Spec)
				}
				sameData(t, ext, orig, got)
				if err := os.Remove(filepath.Join(lib, "exported"+ext)); err != nil {
					t.Fatal(err)
				}
				// Unknown fields and extensions are written back.
				var a, b map[string]json.RawMessage
				json.Unmarshal(orig.Raw, &a)
				json.Unmarshal(got.Raw, &b)
				for k, v := range a {
					if k == "extensions" && !bytes.Equal(bytes.TrimSpace(v), bytes.TrimSpace(b[k])) && string(bytes.TrimSpace(v)) != "{}" {
						var x, y any
						json.Unmarshal(v, &x)
						json.Unmarshal(b[k], &y)
						if !reflect.DeepEqual(x, y) {
							t.Errorf("%s: extensions changed:\n%s\nthen\n%s", ext, v, b[k])
						}
					}
					if _, ok := b[k]; !ok {
						t.Errorf("%s: field %s lost", ext, k)
					}
				}
			}
			// The PNG carries the card twice, as SillyTavern writes it.
			if !bytes.Contains(png.Bytes(), []byte("tEXtchara\x00")) || !bytes.Contains(png.Bytes(), []byte("tEXtccv3\x00")) {
				t.Errorf("the PNG lacks a chara or ccv3 chunk")
			}
		})
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "My Card (final).JSON")
	os.WriteFile(src, []byte(`{"name":"Mo","first_mes":"Hi."}`), 0o644)
	c, err := cards.Import(dir, src)
	if err != nil || c.ID != "my-card-final" {
		t.Fatalf("got %q, %v", c.ID, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "my-card-final.json")); err != nil {
		t.Fatal(err)
	}
	// Again: the same id, nothing new.
	if c2, err := cards.Import(dir, src); err != nil || c2.ID != c.ID {
		t.Errorf("second import: %q, %v", c2.ID, err)
	}
	// A different card under the same id is refused; the first stays.
	os.WriteFile(src, []byte(`{"name":"Other"}`), 0o644)
	if _, err := cards.Import(dir, src); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Errorf("a different card under the same id: %v", err)
	}
	// Something that is no card is refused and nothing is written.
	bad := filepath.Join(t.TempDir(), "index.json")
	os.WriteFile(bad, []byte(`[{"filename":"x"}]`), 0o644)
	if _, err := cards.Import(dir, bad); !errors.Is(err, cards.ErrNotCard) {
		t.Errorf("a list: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the one card", len(entries))
	}
	long := strings.Repeat("very-long-name-", 10)
	if id := cards.ImportID(long+".png", ""); len([]rune(id)) > 48 || !strings.HasPrefix(id, "very-long-name") {
		t.Errorf("long id = %q", id)
	}
	if id := cards.ImportID("苏砚.json", ""); id != "苏砚" {
		t.Errorf("id = %q", id)
	}
	if id := cards.ImportID("!!!.json", "0123456789abcdef"); id != "card-01234567" {
		t.Errorf("id = %q", id)
	}
}

// TestImportFile: one file goes where troupe card import sends it — a card
// into the card folder, a world-info file (or any file with world) into the
// worlds folder under its name or the one given — and a file that is
// neither writes nothing.
func TestImportFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	card := write("Wren.json", cardstest.Own(t, "v2.json"))
	world := write("harbor-info.json", cardstest.Own(t, "worlds/Harbor.json"))

	im, err := cards.ImportFile(dir, "", card, "", false)
	if err != nil || im.Card.ID != "wren" || im.World != nil {
		t.Fatalf("a card: %+v, %v", im.Card.ID, err)
	}
	im, err = cards.ImportFile(dir, "", world, "", false)
	if err != nil || im.World == nil || im.World.Name != "harbor-info" || im.WorldFile != filepath.Join(dir, "worlds", "harbor-info.json") {
		t.Fatalf("a world file: %+v, %v", im, err)
	}
	worlds := filepath.Join(t.TempDir(), "elsewhere")
	im, err = cards.ImportFile(dir, worlds, world, "Harbor", true)
	if err != nil || im.WorldFile != filepath.Join(worlds, "Harbor.json") {
		t.Fatalf("a world named, into worlds_dir: %+v, %v", im, err)
	}
	// A card taken as a world is no world: refused, nothing written.
	if _, err := cards.ImportFile(dir, worlds, card, "", true); !errors.Is(err, cards.ErrBook) {
		t.Errorf("a card as a world: %v", err)
	}
	if _, err := cards.ImportFile(dir, "", write("junk.png", []byte("junk")), "", false); err == nil {
		t.Errorf("junk imported")
	}
	var files []string
	for _, d := range []string{dir, filepath.Join(dir, "worlds"), worlds} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			files = append(files, e.Name())
		}
	}
	if want := "worlds wren.json harbor-info.json Harbor.json"; strings.Join(files, " ") != want {
		t.Errorf("files written: %q, want %q", strings.Join(files, " "), want)
	}
}
