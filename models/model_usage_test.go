package models_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"troupe/models"
	"troupe/usage"
)

// TestModelUsageAddsUp: counts written by several processes at once add
// up per day and kind (no write replaces another's), a day lists only its
// own, the most called kind first, and an over-long kind is fitted.
func TestModelUsageAddsUp(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				rows := []usage.Row{
					{Day: "2026-12-04", Kind: "chat", Calls: 3, Failures: 1, PromptTokens: 300, CompletionTokens: 30},
					{Day: "2026-12-04", Kind: "record", Calls: 1},
					{Day: "2026-12-03", Kind: "chat", Calls: 9},
				}
				if err := st.AddModelUsage(ctx, rows); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := st.AddModelUsage(ctx, []usage.Row{{Day: "2026-12-04", Kind: strings.Repeat("k", 80), Calls: 1}}); err != nil {
			t.Fatal(err)
		}
		got, err := st.ModelUsageOn(ctx, "2026-12-04")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("usage of the day: %+v, want chat, record and the long kind", got)
		}
		if c := got[0]; c.Kind != "chat" || c.Calls != 12 || c.Failures != 4 || c.PromptTokens != 1200 || c.CompletionTokens != 120 {
			t.Errorf("chat = %+v, want 12 calls, 4 failed, 1200 and 120 tokens", c)
		}
		if r := got[1]; r.Kind != "record" || r.Calls != 4 {
			t.Errorf("second = %+v, want record with 4 calls", r)
		}
		if k := got[2].Kind; utf8.RuneCountInString(k) > 32 {
			t.Errorf("a kind of %d characters was stored", utf8.RuneCountInString(k))
		}
	})
}
