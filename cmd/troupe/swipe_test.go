package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/models"
)

// TestSwipeInTheConsole: in `troupe chat`, /swipe on the greeting shows
// the card's other greeting and /swipe 1 the first again; a message's
// reply gets two more alternatives from /swipe, every one kept, and
// /swipe 1 goes back to the first. The next message's prompt holds the
// first greeting and the first alternative, and nothing swiped away.
func TestSwipeInTheConsole(t *testing.T) {
	const (
		greeting1 = "The kettle rattles on the iron stove."
		greeting2 = "The door at the foot of the tower bangs open"
	)
	takes := []string{"First take: the lamp is lit.", "Second take: the lamp gutters.", "Third take: the lamp is dark."}
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			fake.Script(openaitest.Answer{Text: takes[0]}, openaitest.Answer{Text: takes[1]}, openaitest.Answer{Text: takes[2]})
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			in := strings.NewReader("/swipe\n/swipe 1\nWhat of the lamp?\n/swipe\n/swipe\n/swipe 1\nAnd now?\n")
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "5s"},
				in, &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			got := out.String()
			t.Logf("console output:\n%s", got)
			for _, want := range []string{
				greeting2, "[troupe] alternative 2 of 2",
				takes[2], "[troupe] alternative 3 of 3",
				"[troupe] alternative 1 of 3",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the console output lacks %q", want)
				}
			}
			if n := strings.Count(got, takes[0]); n != 2 {
				t.Errorf("the first alternative printed %d times, want 2 (written, then chosen again)", n)
			}
			if n := strings.Count(got, greeting1); n != 2 {
				t.Errorf("the first greeting printed %d times, want 2 (shown, then chosen again)", n)
			}

			var prompt string
			for _, r := range fake.Requests() {
				if n := len(r.Messages); n > 0 && strings.Contains(r.Messages[n-1].Content, "And now?") {
					var b strings.Builder
					for _, m := range r.Messages {
						b.WriteString(m.Content + "\n")
					}
					prompt = b.String()
				}
			}
			if prompt == "" {
				t.Fatal("no model request answers \"And now?\"")
			}
			for _, want := range []string{greeting1, takes[0]} {
				if !strings.Contains(prompt, want) {
					t.Errorf("the prompt lacks %q, chosen with /swipe 1:\n%s", want, prompt)
				}
			}
			for _, gone := range []string{greeting2, takes[1], takes[2]} {
				if strings.Contains(prompt, gone) {
					t.Errorf("the prompt holds %q, swiped away:\n%s", gone, prompt)
				}
			}

			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, take := range takes {
				var n int64
				st.DB().Model(&models.Message{}).Where("content = ?", take).Count(&n)
				if n != 1 {
					t.Errorf("%q stored %d times, want once (every alternative kept)", take, n)
				}
			}
		})
	}
}
