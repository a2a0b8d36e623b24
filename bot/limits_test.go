package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
)

func TestPerUserLimits(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	clock := time.Now()
	p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory,
		Limits: bot.Limits{PerMinute: 3, MaxChars: 100}, Now: func() time.Time { return clock }})
	ctx := context.Background()
	in := inbound("limits", 1)
	in.Channel.Platform = "telegram"
	long := in
	long.Text = strings.Repeat("x", 101)
	s := &discardSink{}
	must(t, handle(ctx, p, long, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "too long") || r.fake.Count() != 0 {
		t.Fatalf("long message: notices %v, model calls %d", s.notices, r.fake.Count())
	}
	var notices []string
	for i := 0; i < 6; i++ {
		in.MessageID = string(rune('a' + i))
		s := &discardSink{}
		must(t, handle(ctx, p, in, s))
		notices = append(notices, s.notices...)
	}
	if r.fake.Count() != 3 || len(notices) != 1 || !strings.Contains(notices[0], "wait a moment") {
		t.Errorf("6 messages at a limit of 3/min: %d model calls, notices %v; want 3 calls and one polite notice", r.fake.Count(), notices)
	}
	clock = clock.Add(time.Minute)
	in.MessageID = "later"
	must(t, handle(ctx, p, in, &discardSink{}))
	if r.fake.Count() != 4 {
		t.Errorf("after a minute the user was still refused")
	}
}
