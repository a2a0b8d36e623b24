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

// The recorder is on by default: a console chat's /record records the
// turns a later message follows, and `troupe memory show` prints the
// characters, perceptions per character, threads, relationships, knowledge
// and the ledger (text and JSON).
func TestRecordShownByMemoryShow(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{}
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
			out := troupe("*I knock.* \"Is the key here?\"\n\"Show me the lamp.\"\n/record\n/memory\n",
				"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "15s")
			if !strings.Contains(out, "Recorded: sealed") || !strings.Contains(out, "Ledger (may lag the story):") {
				t.Fatalf("/record and /memory in the console:\n%s", out)
			}
			out = troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada")
			for _, want := range []string{"== characters ==\nAda\tplayer", "-- Maren --\nturn 1\tsaw", "heard\timportance=8", "mystery\topen\tWhat is the light for?",
				"Maren → Ada\tmet at the lighthouse", "Maren knows the lighthouse (place)", `"place":"the lighthouse"`} {
				if !strings.Contains(out, want) {
					t.Errorf("memory show lacks %q:\n%s", want, out)
				}
			}
			out = troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json")
			if !strings.Contains(out, `"record": {`) || !strings.Contains(out, `"Maren": [`) || !strings.Contains(out, `"unsealed_events": `) {
				t.Errorf("memory show --json lacks the record:\n%s", out)
			}
		})
	}
}
