package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

// Issue 35, item 4: the relay summary is shown whole by `troupe memory
// show` (text and JSON) and shortened by /memory, and `troupe memory edit
// --chat ID --summary FILE` replaces it: the next prompt's [Previously]
// holds the new text, the old one stays in the chat's history, and an
// empty file, a missing --chat or a chat of another card are refused.
func TestRelaySummaryShownAndEdited(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
			fake.SetResponder(scribe.Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "error"
			vals["TROUPE_MEMORY_KEEP"] = "2"
			vals["TROUPE_MEMORY_PERIOD"] = "2"
			vals["TROUPE_RECORDER_ENABLED"] = "false"
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			troupe := func(stdin string, args ...string) (string, error) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals))
				return out.String() + errOut.String(), err
			}
			must := func(stdin string, args ...string) string {
				t.Helper()
				out, err := troupe(stdin, args...)
				if err != nil {
					t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			chat := func(input string) string {
				return must(input, "chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "30s")
			}
			const card, space = "lantern-keeper", "console:local:Ada"
			chat(storyLines(20))
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chats, err := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			if err != nil || len(chats) != 1 {
				t.Fatalf("chats = %v, %v", chats, err)
			}
			active, err := st.ActiveSummaries(ctx, chats[0])
			if err != nil || len(active) != 1 {
				t.Fatalf("active summaries = %v, %v; want the story compacted", active, err)
			}
			old := active[0]

			out := must("", "memory", "show", "--card", card, "--space", space)
			if !strings.Contains(out, "== summaries ==") || !strings.Contains(out, old.Content) {
				t.Errorf("memory show lacks the whole summary %q:\n%s", old.Content, out)
			}
			var view struct {
				Summaries []map[string]any `json:"summaries"`
			}
			if err := json.Unmarshal([]byte(must("", "memory", "show", "--card", card, "--space", space, "--json")), &view); err != nil {
				t.Fatal(err)
			}
			if len(view.Summaries) != 1 || view.Summaries[0]["content"] != old.Content || view.Summaries[0]["chat_id"] != chats[0].ID {
				t.Errorf("memory show --json summaries = %v", view.Summaries)
			}

			dir := t.TempDir()
			mine := "## Story so far\nAda counted eleven gulls over Gull Rock and told Maren so; Maren hid a brass key under the third stair."
			writeFile(t, filepath.Join(dir, "summary.md"), mine+"\n")
			writeFile(t, filepath.Join(dir, "empty.md"), "  \n")
			for _, bad := range [][]string{
				{"memory", "edit", "--chat", chats[0].ID, "--summary", filepath.Join(dir, "empty.md")},
				{"memory", "edit", "--summary", filepath.Join(dir, "summary.md")},
				{"memory", "edit", "--chat", chats[0].ID, "--card", "tea-house", "--summary", filepath.Join(dir, "summary.md")},
				{"memory", "edit", "--chat", "01NOSUCHCHAT0000000000000", "--summary", filepath.Join(dir, "summary.md")},
			} {
				if out, err := troupe("", bad...); err == nil {
					t.Errorf("troupe %s was accepted:\n%s", strings.Join(bad, " "), out)
				}
			}
			must("", "memory", "edit", "--chat", chats[0].ID, "--summary", filepath.Join(dir, "summary.md"))
			all, err := st.ChatSummaries(ctx, chats[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			kept := false
			for _, s := range all {
				kept = kept || s.Content == old.Content
			}
			if !kept {
				t.Errorf("the old summary is gone from the chat's history")
			}
			if out := must("", "memory", "show", "--card", card, "--space", space); !strings.Contains(out, mine) || strings.Contains(out, old.Content) {
				t.Errorf("memory show does not show the edited summary alone:\n%s", out)
			}

			before := len(fake.Requests())
			out = chat("What did I count?\n/memory\n")
			if !strings.Contains(out, "The story so far, as the scribe condensed it") || !strings.Contains(out, "Maren hid a brass key under the third stair.") {
				t.Errorf("/memory does not show the summary:\n%s", out)
			}
			var prev string
			for _, r := range fake.Requests()[before:] {
				if memorytest.Kind(r) == "" {
					if p := memorytest.Previously(r); p != "" {
						prev = p
					}
				}
			}
			if !strings.Contains(prev, mine) {
				t.Errorf("the next turn's [Previously] does not hold the edited summary:\n%s", prev)
			}
		})
	}
}
