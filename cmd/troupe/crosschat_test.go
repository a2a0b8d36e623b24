package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

func TestConsoleCrossChatMemoryAndForget(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
			fake.SetResponder(scribe.Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			chat := func(user, input string) string {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", user, "--drain-timeout", "20s"},
					strings.NewReader(input), &out, &errOut, testEnv(vals))
				if err != nil {
					t.Fatalf("run: %v\n%s", err, errOut.String())
				}
				return out.String()
			}
			// The first chat ends with /new: its recap is written now and
			// consolidated into the resident summary.
			chat("Ada", "I carry a zebra lantern up the stair.\nThe zebra lantern flickers.\n/new\nHello again.\n")
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chats, _ := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			if len(chats) != 2 {
				t.Fatalf("chats = %d, want 2", len(chats))
			}
			first := chats[1]
			mem, _ := st.LoadMemory(ctx, "lantern-keeper", "console:local:Ada")
			if !strings.Contains(mem.Resident, "[chat:"+first.ID+"]") {
				t.Fatalf("the resident does not remember the first chat:\n%s", mem.Resident)
			}
			// A turn of the second chat carries the resident (tags stripped).
			before := fake.Count()
			chat("Ada", "Do you remember me?\n")
			req := lastTurn(t, fake, before)
			prev := req.Messages[1].Content
			if !strings.HasPrefix(prev, "[Previously]") || !strings.Contains(prev, first.Name) || strings.Contains(prev, "[chat:") {
				t.Errorf("the second chat's prompt lacks the resident summary:\n%s", prev)
			}
			// Another person's space never sees it.
			before = fake.Count()
			chat("Bea", "Hello, who are you?\n")
			for _, m := range lastTurn(t, fake, before).Messages[1:] {
				if strings.Contains(m.Content, "[Previously]") || strings.Contains(m.Content, first.Name) {
					t.Errorf("Bea's prompt carries Ada's memory: %.80q", m.Content)
				}
			}
			// /forget the first chat: cancel does nothing, yes forgets.
			out := chat("Ada", fmt.Sprintf("/forget %s\nno\n/forget %s\nyes\n", first.ID, first.ID))
			if !strings.Contains(out, "Cancelled") || !strings.Contains(out, "Forgotten") {
				t.Errorf("console forget flow output:\n%s", out)
			}
			if _, err := st.Chat(ctx, first.ID); err == nil {
				t.Errorf("the forgotten chat still exists")
			}
			mem, _ = st.LoadMemory(ctx, "lantern-keeper", "console:local:Ada")
			if strings.Contains(mem.Resident, first.ID) || strings.Contains(mem.Handbook, first.ID) || strings.Contains(strings.ToLower(mem.Handbook), "zebra") {
				t.Errorf("memory still mentions the forgotten chat:\n%s\n%s", mem.Handbook, mem.Resident)
			}
			for _, table := range models.All() {
				var rows []map[string]any
				st.DB().Model(table).Find(&rows)
				for _, row := range rows {
					if s := fmt.Sprint(row); strings.Contains(strings.ToLower(s), "zebra lantern") {
						t.Errorf("%T still holds the forgotten chat's words: %.120s", table, s)
					}
				}
			}
			// Forgetting it again is harmless.
			out = chat("Ada", fmt.Sprintf("/forget %s\n", first.ID))
			if !strings.Contains(out, "already forgotten") {
				t.Errorf("second forget said:\n%s", out)
			}
			// The same from the command line.
			chats, _ = st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			var cliOut, errOut bytes.Buffer
			if err := run(ctx, []string{"memory", "forget", "--chat", chats[0].ID, "--yes"}, nil, &cliOut, &errOut, testEnv(vals)); err != nil {
				t.Fatalf("memory forget: %v %s", err, errOut.String())
			}
			if _, err := st.Tombstone(ctx, chats[0].ID); err != nil {
				t.Errorf("memory forget left no tombstone: %v", err)
			}
			cliOut.Reset()
			if err := run(ctx, []string{"memory", "show", "--json"}, nil, &cliOut, &errOut, testEnv(vals)); err != nil || !strings.Contains(cliOut.String(), `"space_id": "console:local:Bea"`) {
				t.Errorf("memory show --json: %v\n%s", err, cliOut.String())
			}
		})
	}
}

// lastTurn returns the last chat-turn request made after the first n.
func lastTurn(t *testing.T, fake *openaitest.Server, n int) openaitest.Request {
	t.Helper()
	reqs := fake.Requests()[n:]
	for i := len(reqs) - 1; i >= 0; i-- {
		if memorytest.Kind(reqs[i]) == "" {
			return reqs[i]
		}
	}
	t.Fatal("no turn request")
	return openaitest.Request{}
}
