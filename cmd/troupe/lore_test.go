package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

// TestChatLoreWorldsAndState plays the console with a card that names a
// world in cards.dir/worlds and a book given with --lore: both reach the
// prompt, the world's sticky entry holds on the next turn and again when
// that turn is regenerated (the state before a turn is kept), and the
// chat's timers and variables are stored in the database.
func TestChatLoreWorldsAndState(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(rel, body string) string {
				t.Helper()
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			card := write("cards/lore-card.json", `{"spec":"chara_card_v2","data":{"name":"Vel","description":"A guide.","first_mes":"Hi {{user}}.",
				"scenario":"{{setvar::coins::3}}Vel has {{getvar::coins}} coins.","extensions":{"world":"Harbor"}}}`)
			write("cards/worlds/harbor.json", `{"entries":{"0":{"uid":0,"key":["market"],"content":"MARKET-LORE","sticky":1}}}`)
			extra := write("extra.json", `{"entries":{"0":{"uid":0,"key":"dragon","content":"DRAGON-LORE"}}}`)
			fake := openaitest.NewServer(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = filepath.Join(dir, "cards")
			vals["TROUPE_LOG_LEVEL"] = "warn"
			in := strings.NewReader("To the market.\nA dragon!\n/regen\n")
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, []string{"chat", "--card", card, "--lore", extra, "--user", "Ada", "--no-worker"}, in, &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			var dragon []string
			for _, r := range fake.Requests() {
				if r.Path != "/v1/chat/completions" || memorytest.Kind(r) != "" {
					continue
				}
				sys := r.Messages[0].Content
				switch memorytest.LastUser(r) {
				case "To the market.":
					if !strings.Contains(sys, "MARKET-LORE") || strings.Contains(sys, "DRAGON-LORE") {
						t.Errorf("turn 1 system message:\n%s", sys)
					}
					if !strings.Contains(sys, "Vel has 3 coins.") {
						t.Errorf("setvar/getvar did not expand:\n%s", sys)
					}
				case "A dragon!":
					dragon = append(dragon, sys)
				}
			}
			if len(dragon) != 2 {
				t.Fatalf("%d requests for turn 2, want 2 (the turn and its regen)", len(dragon))
			}
			for i, sys := range dragon {
				if !strings.Contains(sys, "DRAGON-LORE") || !strings.Contains(sys, "MARKET-LORE") {
					t.Errorf("turn 2, request %d: want the --lore entry and the sticky world entry:\n%s", i+1, sys)
				}
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chats, err := st.ChannelChats(ctx, "console:Ada/lore-card")
			if err != nil || len(chats) != 1 {
				t.Fatalf("chats = %d (%v), want 1", len(chats), err)
			}
			raw, err := st.ChatLoreState(ctx, chats[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			var state struct {
				After struct {
					Turn   int                       `json:"turn"`
					Timers map[string]map[string]int `json:"timers"`
					Vars   map[string]string         `json:"vars"`
				} `json:"after"`
			}
			if err := json.Unmarshal([]byte(raw), &state); err != nil {
				t.Fatal(err)
			}
			if state.After.Turn != 2 || state.After.Vars["coins"] != "3" || state.After.Timers["harbor/0"]["sticky_until"] != 2 {
				t.Errorf("stored state: %s", raw)
			}
		})
	}
}
