package cardstest

import (
	"embed"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// own holds the project's own small cards (JSON, read as written) and the
// world one of them links.
//
//go:embed own
var own embed.FS

// Own returns the content of a file of the own folder: v1.json, v2.json,
// v3.json or worlds/Harbor.json.
func Own(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := own.ReadFile("own/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// OwnFeatures is what each file of OwnFiles exercises (as Features names
// it), or "not a card: world-info" for the world file.
var OwnFeatures = map[string][]string{
	"own-v1.json":               {"format:json", "spec:v1", "examples:2"},
	"own-v2.json":               {"format:json", "spec:v2", "book:2", "world", "depth_prompt", "system_prompt", "post_history", "{{original}}", "alternate_greetings:2", "extensions"},
	"own-v3.json":               {"format:json", "spec:v3", "nickname", "book:2", "group_greetings:1"},
	"own-chara.png":             {"format:png", "spec:v2", "image", "book:2", "world"},
	"own-ccv3.png":              {"format:png", "spec:v3", "image", "nickname"},
	"own-both.png":              {"format:png", "spec:v3", "image", "nickname"},
	"own.charx":                 {"format:charx", "spec:v3", "image", "nickname", "book:2"},
	"own-harbor-worldinfo.json": {"not a card: world-info"},
}

// OwnFiles writes the project's own small cards into a new folder, one of
// each format a card comes in — V1, V2 and V3 JSON; PNG with a chara chunk
// (V2), a ccv3 chunk (V3), and both (ccv3 wins); CHARX — and a world-info
// file, which is no card. The folder also holds worlds/Harbor.json, the
// world the V2 card links. It returns the files beside the worlds folder,
// sorted; their folder is filepath.Dir of any.
func OwnFiles(tb testing.TB) []string {
	tb.Helper()
	dir := tb.TempDir()
	v2, v3 := Own(tb, "v2.json"), Own(tb, "v3.json")
	red := Picture(tb, 4, 4, color.RGBA{R: 180, A: 255})
	files := map[string][]byte{
		"own-v1.json":               Own(tb, "v1.json"),
		"own-v2.json":               v2,
		"own-v3.json":               v3,
		"own-chara.png":             PNG(tb, red, CardChunk("chara", string(v2))),
		"own-ccv3.png":              PNG(tb, red, CardChunk("ccv3", string(v3))),
		"own-both.png":              PNG(tb, red, CardChunk("chara", string(v2)), CardChunk("ccv3", string(v3))),
		"own.charx":                 CHARX(tb, map[string][]byte{"card.json": v3, "assets/icon/main.png": red}),
		"own-harbor-worldinfo.json": Own(tb, "worlds/Harbor.json"),
		"worlds/Harbor.json":        Own(tb, "worlds/Harbor.json"),
	}
	var out []string
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		if filepath.Dir(path) == dir {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}
