package usage_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/usage"
)

func TestKindTravelsInTheContext(t *testing.T) {
	ctx := context.Background()
	if k := usage.KindOf(ctx, usage.Chat); k != usage.Chat {
		t.Errorf("no kind named: %q, want the fallback", k)
	}
	if k := usage.KindOf(usage.WithKind(ctx, "recap"), usage.Chat); k != "recap" {
		t.Errorf("kind = %q, want recap", k)
	}
}

// TestCounterSumsByDayAndKind: calls from many goroutines sum by day and
// kind, a drain starts over, and rows put back after a failed write are
// drained again with what came since.
func TestCounterSumsByDayAndKind(t *testing.T) {
	day := time.Date(2026, 12, 4, 23, 59, 0, 0, time.Local)
	var mu sync.Mutex
	c := &usage.Counter{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return day }}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			c.Add(usage.Call{Kind: "chat", PromptTokens: 10, CompletionTokens: 2, Failed: i%10 == 0})
			c.Add(usage.Call{Kind: "record"})
		})
	}
	wg.Wait()
	mu.Lock()
	day = day.Add(2 * time.Minute) // past midnight
	mu.Unlock()
	c.Add(usage.Call{Kind: "chat", PromptTokens: 1})
	rows := c.Drain()
	slices.SortFunc(rows, func(a, b usage.Row) int { return strings.Compare(a.Day+a.Kind, b.Day+b.Kind) })
	want := []usage.Row{
		{Day: "2026-12-04", Kind: "chat", Calls: 50, Failures: 5, PromptTokens: 500, CompletionTokens: 100},
		{Day: "2026-12-04", Kind: "record", Calls: 50},
		{Day: "2026-12-05", Kind: "chat", Calls: 1, PromptTokens: 1},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("drained %+v\nwant %+v", rows, want)
	}
	if again := c.Drain(); len(again) != 0 {
		t.Errorf("a second drain gave %+v, want nothing", again)
	}
	c.Putback(want[2:])
	c.Add(usage.Call{Kind: "chat", PromptTokens: 4})
	if rows := c.Drain(); len(rows) != 1 || rows[0].Calls != 2 || rows[0].PromptTokens != 5 {
		t.Errorf("after a put back: %+v, want 2 calls, 5 prompt tokens", rows)
	}
}
