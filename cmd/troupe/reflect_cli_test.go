package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
)

// A console chat's /reflect forms a belief; `troupe memory show` prints it
// with confidence and evidence (text and JSON) and `troupe memory belief
// delete` removes it.
func TestReflectShownAndDeletedByCLI(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			fake.SetResponder(memorytest.Reflecting(&memorytest.Scribe{}))
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "error"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			troupe := func(args ...string) (string, error) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(ctx, args, strings.NewReader(""), &out, &errOut, testEnv(vals))
				return out.String() + errOut.String(), err
			}
			var out, errOut bytes.Buffer
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "15s"},
				strings.NewReader("*I knock.*\n\"Is the light lit?\"\n\"Who keeps it?\"\n/reflect\n/memory\n"), &out, &errOut, testEnv(vals))
			if err != nil || !strings.Contains(out.String(), "Reflected: manual") || !strings.Contains(out.String(), "Beliefs (1):") {
				t.Fatalf("/reflect and /memory in the console (%v):\n%s", err, out.String())
			}
			show, err := troupe("memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada")
			if err != nil || !strings.Contains(show, "== beliefs ==") || !strings.Contains(show, "Maren (likely, +") || !strings.Contains(show, "\tsupports p:") {
				t.Fatalf("memory show (%v):\n%s", err, show)
			}
			id := regexp.MustCompile(`\[(\w{26})\] Maren`).FindStringSubmatch(show)
			if id == nil {
				t.Fatalf("no belief id in:\n%s", show)
			}
			js, err := troupe("memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json")
			if err != nil || !strings.Contains(js, `"beliefs": [`) || !strings.Contains(js, `"confidence": "likely"`) {
				t.Fatalf("memory show --json (%v):\n%s", err, js)
			}
			if got, err := troupe("memory", "belief", "delete", id[1]); err != nil || !strings.Contains(got, "deleted belief "+id[1]) {
				t.Fatalf("memory belief delete (%v): %s", err, got)
			}
			if _, err := troupe("memory", "belief", "delete", id[1]); err == nil {
				t.Fatal("deleting it again succeeded")
			}
			show, _ = troupe("memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada")
			if strings.Contains(show, id[1]) {
				t.Fatalf("the belief is still shown:\n%s", show)
			}
		})
	}
}
