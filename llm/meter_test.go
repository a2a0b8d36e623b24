package llm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/usage"
)

// TestMeterCountsCallsByKind: each finished call reaches the meter once
// (retries are one call), under the kind its context names or "chat",
// with the tokens the endpoint reported; a failed call counts as failed.
func TestMeterCountsCallsByKind(t *testing.T) {
	s := openaitest.NewServer(t)
	counter := &usage.Counter{}
	c := llm.New(llm.Config{BaseURL: s.URL(), Model: "m", MaxRetries: -1, Meter: counter}, nil)
	ctx := context.Background()
	msgs := []bot.PromptMessage{{Role: bot.RoleUser, Content: "Hello there."}}
	if _, err := c.Stream(ctx, bot.ModelRequest{Messages: msgs}, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(usage.WithKind(ctx, "recap"), bot.ModelRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	s.Script(openaitest.Answer{Fault: openaitest.Fault500})
	if _, err := c.Complete(usage.WithKind(ctx, "recap"), bot.ModelRequest{Messages: msgs}); err == nil {
		t.Fatal("a 500 did not fail")
	}
	rows := counter.Drain()
	slices.SortFunc(rows, func(a, b usage.Row) int { return strings.Compare(a.Kind, b.Kind) })
	if len(rows) != 2 || rows[0].Kind != "chat" || rows[0].Calls != 1 || rows[0].Failures != 0 || rows[0].PromptTokens <= 0 ||
		rows[1].Kind != "recap" || rows[1].Calls != 2 || rows[1].Failures != 1 {
		t.Errorf("counted %+v, want one chat call with its tokens and two recap calls, one failed", rows)
	}
}
