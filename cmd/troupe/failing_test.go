package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
)

// A memory job that keeps failing stays owed and visible: /memory and
// `troupe memory show` name it, how often it failed and when it is tried
// next; only the CLI says why (a reason can carry a provider's error).
func TestFailingMemoryJobIsShown(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
			scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) {
				return openaitest.Answer{Text: "I'd rather not merge these."}, kind == "consolidate"
			}
			fake.SetResponder(scribe.Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "error"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			troupe := func(stdin string, args ...string) string {
				t.Helper()
				var out, errOut bytes.Buffer
				if err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals)); err != nil {
					t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
				}
				return out.String()
			}
			chat := func(input string) string {
				return troupe(input, "chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "15s")
			}
			// /new owes the recap now; its consolidation is rejected. The
			// chat ends without waiting out the retry's backoff.
			start := time.Now()
			chat("I carry a lamp up the stair.\n/new\n")
			if scribe.Count("consolidate") < 2 {
				t.Fatalf("consolidation asked %d times, want a rejected answer and its repair", scribe.Count("consolidate"))
			}
			if took := time.Since(start); took > 14*time.Second {
				t.Errorf("chat took %s to end: it waited for a job backing off", took)
			}
			key := "lantern-keeper|console:local:Ada"
			out := chat("/memory\n")
			if !strings.Contains(out, "Owed, failing: consolidation of "+key) || !strings.Contains(out, "(failures in a row: ") || strings.Contains(out, "rejected") {
				t.Errorf("/memory does not show the failing consolidation, or shows why (which only the CLI may):\n%s", out)
			}
			out = troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada")
			_, failing, _ := strings.Cut(out, "== failing jobs ==\n")
			if !strings.Contains(failing, "consolidate\t"+key+"\tattempts=") || !strings.Contains(failing, "next=20") || !strings.Contains(failing, "rejected") {
				t.Errorf("memory show does not list the failing job with its next try:\n%s", out)
			}
			out = troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json")
			if !strings.Contains(out, `"outcome": "failed"`) || !strings.Contains(out, `"retry_at": "20`) {
				t.Errorf("memory show --json lacks the failing job:\n%s", out)
			}
		})
	}
}
