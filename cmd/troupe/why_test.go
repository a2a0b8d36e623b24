package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
)

// With recall.diagnostics on, /why in the console and `troupe memory why
// --chat ID` show the last turn's recall candidates with their scores.
func TestMemoryWhyShowsTheLastRecall(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			fake.SetResponder((&memorytest.Scribe{}).Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "error"
			vals["TROUPE_RECORDER_BATCH"] = "1"
			vals["TROUPE_RECALL_DIAGNOSTICS"] = "true"
			// The test asks what recall found, not how fast: on a loaded
			// machine a search past the 5 s default cap leaves the block
			// out, and /why rightly says nothing was found.
			vals["TROUPE_RECALL_TIMEOUT"] = "60s"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			troupe := func(stdin string, args ...string) (string, error) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals))
				return out.String() + errOut.String(), err
			}
			chat := []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "60s"}
			// The first session's record is written by the time it ends
			// (its jobs drain); the second asks.
			if out, err := troupe("I buried the brass compass under the old oak.\n*I wait.*\n*I wait longer.*\n", chat...); err != nil {
				t.Fatalf("first session: %v\n%s", err, out)
			}
			out, err := troupe("Where is the brass compass?\n/why\n", chat...)
			if err != nil || !strings.Contains(out, "What the last turn recalled") || !strings.Contains(out, "brass compass under the old oak") {
				t.Fatalf("/why in the console (%v):\n%s", err, out)
			}
			js, err := troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Chats []struct {
					ID string `json:"id"`
				} `json:"chats"`
			}
			if err := json.Unmarshal([]byte(js[:strings.LastIndex(js, "}")+1]), &v); err != nil || len(v.Chats) == 0 {
				t.Fatalf("memory show --json: %v\n%s", err, js)
			}
			out, err = troupe("", "memory", "why", "--chat", v.Chats[0].ID, "--limit", "10")
			if err != nil || !strings.Contains(out, "brass compass under the old oak") || !strings.Contains(out, "relevance") {
				t.Errorf("memory why (%v):\n%s", err, out)
			}
			if _, err := troupe("", "memory", "why"); err == nil || !isUsage(err) {
				t.Errorf("memory why without --chat: %v", err)
			}
		})
	}
}
