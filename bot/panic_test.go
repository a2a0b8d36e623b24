package bot_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"troupe/bot"
	"troupe/cards"
	"troupe/ops"
)

// TestTurnPanicRecovered: a turn that panics (here the randomness a card's
// {{random}} macro draws from, as a broken source of it would) is answered
// with a short notice and counted in troupe_panics_total; the same channel
// then answers its next message, without the message that panicked, and
// another channel is served as before.
func TestTurnPanicRecovered(t *testing.T) {
	card, err := cards.LoadCard(filepath.Join("..", "examples", "cards", "lantern-keeper.json"))
	if err != nil {
		t.Fatal(err)
	}
	card.Description += " Tonight the sea is {{random::calm::stormy}}."
	var armed atomic.Bool
	metrics := ops.NewMetrics(nil, nil)
	r := newLoreRig(t, card, func(o *bot.Options) {
		o.Observer = metrics
		o.Rand = func() float64 {
			if armed.Load() {
				var weights []float64
				return weights[3] // an index out of range, as a real bug would
			}
			return 0.3
		}
	})
	ctx := context.Background()
	send := func(ch, id, text string) (*recSink, error) {
		t.Helper()
		s := newRecSink()
		ref := bot.ChannelRef{Platform: "console", ID: ch, SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
		ev := bot.Event{Kind: bot.EventMessage, In: bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: id, Text: text}}
		return s, r.p.Submit(ctx, ev, s).Wait(ctx)
	}

	armed.Store(true)
	s, err := send("a", "1", "The lamp sputters: poisoned words.")
	if !errors.Is(err, bot.ErrPanicked) {
		t.Fatalf("the turn that panicked ended with %v, want ErrPanicked", err)
	}
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "Something broke") || len(s.replies) != 0 {
		t.Fatalf("the channel got notices %q and replies %q, want one notice that something broke", s.notices, s.replies)
	}

	armed.Store(false)
	for _, ch := range []string{"a", "b"} {
		s, err := send(ch, "2", "Good evening, keeper.")
		if err != nil || len(s.replies) != 1 || len(s.notices) != 0 {
			t.Fatalf("channel %s after the panic: err %v, replies %q, notices %q; want one reply", ch, err, s.replies, s.notices)
		}
	}
	var users []string
	for _, m := range branchOf(t, r.st, "console:a") {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if strings.Join(users, "|") != "Good evening, keeper." {
		t.Errorf("channel a's chat holds user messages %q, want only the one after the panic (the other set aside)", users)
	}

	rec := httptest.NewRecorder()
	ops.NewServer("127.0.0.1:0", metrics, nil, slog.New(slog.DiscardHandler)).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `troupe_panics_total{where="turn"} 1`) {
		t.Errorf("metrics do not count the panic:\n%s", grepLines(rec.Body.String(), "troupe_panics"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
