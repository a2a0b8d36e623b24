package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/cards/cardstest"
	"troupe/fakes/openaitest"
)

// TestTwoCardFilesOfOneStemKeepTheirOwnChats: wren.json and wren.png, two
// different cards both called Wren, in one card folder. `card list` shows
// both, each with its id, and says they share a stem; neither is skipped.
// `troupe chat --card` with one and then the other plays two chats: the
// second opens with its own greeting, and its prompt holds nothing of the
// first's. Two files named wren.json from two other folders in one scene
// are two members.
func TestTwoCardFilesOfOneStemKeepTheirOwnChats(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pic := cardstest.Picture(t, 2, 2, color.Gray{Y: 9})
			files := map[string][]byte{
				"wren.json": []byte(`{"spec":"chara_card_v2","data":{"name":"Wren","description":"The ferry pilot.","first_mes":"FERRY-WREN waves from the deck."}}`),
				"wren.png": cardstest.PNG(t, pic, cardstest.CardChunk("chara",
					`{"spec":"chara_card_v2","data":{"name":"Wren","description":"The locksmith.","first_mes":"LOCK-WREN looks up from a lock."}}`)),
			}
			for f, data := range files {
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, _, err := runCard(t, "list", "--dir", dir, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Cards []struct {
					ID, File   string
					SharedStem string `json:"shared_stem"`
				}
				Failed []failedLine
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			ids := map[string]string{}
			for _, c := range list.Cards {
				if c.SharedStem == "wren" {
					ids[c.File] = c.ID
				}
			}
			if len(list.Failed) != 0 || len(list.Cards) != 2 || ids["wren.json"] != "wren-json" || ids["wren.png"] != "wren-png" {
				t.Errorf("card list: cards %+v, failed %+v", list.Cards, list.Failed)
			}
			out, _, err = runCard(t, "list", "--dir", dir)
			if err != nil || !strings.Contains(out, "wren-json  Wren") || !strings.Contains(out, "wren-png   Wren") ||
				!strings.Contains(out, `"wren": wren.json is wren-json, wren.png is wren-png`) {
				t.Errorf("card list: %v\n%s", err, out)
			}

			fake := openaitest.NewServer(t)
			var mu sync.Mutex
			var prompts []string
			fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				var b strings.Builder
				for _, m := range req.Messages {
					b.WriteString(m.Content + "\n")
				}
				mu.Lock()
				prompts = append(prompts, b.String())
				mu.Unlock()
				return openaitest.Answer{Text: "A nod."}
			})
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = dir
			vals["TROUPE_LOG_LEVEL"] = "warn"
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			chat := func(input string, cards ...string) string {
				t.Helper()
				args := []string{"chat", "--user", "Ada", "--drain-timeout", "5s"}
				for _, c := range cards {
					args = append(args, "--card", c)
				}
				var out, errOut bytes.Buffer
				if err := run(ctx, args, strings.NewReader(input), &out, &errOut, testEnv(vals)); err != nil {
					t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
				}
				return out.String()
			}
			const secret = "KESTREL-41"
			first := chat("Remember the tide mark "+secret+".\n", filepath.Join(dir, "wren.json"))
			if !strings.Contains(first, "FERRY-WREN") {
				t.Fatalf("wren.json's chat does not open with its greeting:\n%s", first)
			}
			mu.Lock()
			prompts = nil
			mu.Unlock()
			second := chat("What did I tell you?\n", filepath.Join(dir, "wren.png"))
			if !strings.Contains(second, "LOCK-WREN") || strings.Contains(second, "FERRY-WREN") {
				t.Errorf("wren.png's chat: want its own greeting, not wren.json's chat resumed:\n%s", second)
			}
			mu.Lock()
			for _, p := range prompts {
				if strings.Contains(p, secret) || strings.Contains(p, "ferry pilot") {
					t.Errorf("a prompt of wren.png's chat holds wren.json's chat or card:\n%s", p)
				}
			}
			if len(prompts) == 0 {
				t.Errorf("wren.png's chat sent no prompt")
			}
			mu.Unlock()

			// Two wren.json files from elsewhere, in one scene.
			a, b := filepath.Join(t.TempDir(), "wren.json"), filepath.Join(t.TempDir(), "wren.json")
			os.WriteFile(a, []byte(`{"name":"Wren","first_mes":"SMITH-WREN sets down a hammer."}`), 0o644)
			os.WriteFile(b, []byte(`{"name":"Wren","first_mes":"BAKER-WREN dusts off flour."}`), 0o644)
			scene := chat("/cast\n", a, b)
			if !strings.Contains(scene, "SMITH-WREN") || !strings.Contains(scene, "BAKER-WREN") {
				t.Errorf("a scene of two other wren.json files: want both greetings:\n%s", scene)
			}
		})
	}
}
