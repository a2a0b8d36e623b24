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

// Issue 30, item 9: a resident a person made longer than the budget stops
// no consolidation; /memory shows the resident as a turn injects it and
// says it was cut, and `troupe memory show` prints the stored one whole and
// lists what the injected one leaves out.
func TestHandResidentOverBudgetShown(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Faithful{}
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
				return troupe(input, "chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "20s")
			}
			const card, space = "lantern-keeper", "console:local:Ada"
			chat("I carry a lamp up the stair.\n/new\n")
			if n := scribe.Count("consolidate"); n != 1 {
				t.Fatalf("consolidations = %d, want the first chat's", n)
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			mem, err := st.LoadMemory(ctx, card, space)
			if err != nil || !strings.Contains(mem.Resident, "[chat:") {
				t.Fatalf("no resident from the first chat: %v\n%s", err, mem.Resident)
			}
			var hand []string
			for i := 1; i <= 20; i++ {
				hand = append(hand, fmt.Sprintf("- Hand note %02d: the lantern keeper counts the stairs twice every evening.", i))
			}
			troupe(mem.Resident+"\n"+strings.Join(hand, "\n"), "memory", "edit", "--card", card, "--space", space, "--resident", "-")

			// The next worker consolidates again, at the first answer.
			out := chat("/memory\n")
			if n := scribe.Count("consolidate"); n != 2 {
				t.Errorf("consolidations = %d, want one more, installed at its first answer", n)
			}
			if !strings.Contains(out, "Cut to fit a prompt: ") || !strings.Contains(out, "written by hand") || strings.Contains(out, hand[len(hand)-1]) {
				t.Errorf("/memory does not show the injected resident and say it was cut:\n%s", out)
			}

			out = troupe("", "memory", "show", "--card", card, "--space", space)
			stored, rest, _ := strings.Cut(out, "== resident as injected ==\n")
			for _, h := range hand {
				if !strings.Contains(stored, h) {
					t.Errorf("memory show lost the stored hand line %q:\n%s", h, stored)
				}
			}
			note, _, _ := strings.Cut(rest, "\n== handbook ==")
			if !strings.Contains(note, "leaves out or shortens") || !strings.Contains(note, "\t"+hand[len(hand)-1]) || strings.Contains(note, "\t"+hand[0]) {
				t.Errorf("memory show does not say which lines the injected resident cuts:\n%s", note)
			}
		})
	}
}
