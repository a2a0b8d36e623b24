package bot_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
)

// TestSubmitOrdersWithoutBlocking drives one channel through Submit alone:
// Submit returns while the first turn is still held at the model; messages
// submitted meanwhile are stored at once, an edit of one still waiting
// changes what the character reads, a second delivery is ignored, and the
// waiting messages become one next turn, in the order they were submitted.
func TestSubmitOrdersWithoutBlocking(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "submit.db"))
	ctx := context.Background()
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	asked := make(chan []string, 8)
	r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		var users []string
		for _, m := range req.Messages {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		asked <- users
		<-release
		return openaitest.DefaultResponder(req)
	})
	msg := func(id, text string) bot.Event {
		in := inbound("submit", 0)
		in.MessageID, in.Text = id, text
		return bot.Event{Kind: bot.EventMessage, In: in}
	}
	first := r.p.Submit(ctx, msg("1", "first knock"), &discardSink{})
	if err := first.Admitted(ctx); err != nil {
		t.Fatalf("first message not admitted: %v", err)
	}
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the first turn never reached the model")
	}
	// The first turn is held at the model; Submit must not wait for it.
	second := r.p.Submit(ctx, msg("2", "second knock"), &discardSink{})
	third := r.p.Submit(ctx, msg("3", "third knock"), &discardSink{})
	again := r.p.Submit(ctx, msg("2", "second knock"), &discardSink{})
	for i, rc := range []bot.Receipt{second, third, again} {
		if err := rc.Admitted(ctx); err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
	}
	select {
	case <-first.Done():
		t.Fatal("the first turn ended while its model call was held")
	default:
	}
	edit := msg("3", "third knock, edited")
	edit.Kind = bot.EventEdit
	if rc := r.p.Submit(ctx, edit, &discardSink{}); !rc.Revised() {
		t.Fatal("the edit of a waiting message changed nothing")
	}
	select {
	case <-again.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a second delivery of a waiting message was not done at once")
	}
	once.Do(func() { close(release) })
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i, rc := range []bot.Receipt{first, second, third} {
		if err := rc.Wait(wctx); err != nil {
			t.Fatalf("turn of message %d: %v", i+1, err)
		}
	}
	if n := r.fake.Count(); n != 2 {
		t.Fatalf("three messages made %d model calls, want 2 (one turn, then one for the two that waited)", n)
	}
	<-asked
	var users []string
	for _, m := range branchOf(t, r.st, "console:submit") {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	want := []string{"first knock", "second knock", "third knock, edited"}
	if strings.Join(users, "|") != strings.Join(want, "|") {
		t.Fatalf("stored user messages %q, want %q", users, want)
	}
}

// TestSubmitAfterCloseIsNotAdmitted: a closed pipeline refuses at once, and
// says so in the receipt, so a platform delivers the message again.
func TestSubmitAfterCloseIsNotAdmitted(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "closed.db"))
	ctx := context.Background()
	// Positive control: an open pipeline admits the message.
	if err := r.p.Submit(ctx, bot.Event{In: inbound("closed", 1)}, &discardSink{}).Wait(ctx); err != nil {
		t.Fatalf("open pipeline: %v", err)
	}
	if err := r.p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sink := &discardSink{}
	rc := r.p.Submit(ctx, bot.Event{In: inbound("closed", 2)}, sink)
	if err := rc.Admitted(ctx); !errors.Is(err, bot.ErrClosed) {
		t.Fatalf("admitted after close: %v, want ErrClosed", err)
	}
	if len(sink.notices) != 1 {
		t.Fatalf("notices %q, want the shutting-down notice", sink.notices)
	}
}

// speakSink records the calls a reply makes, in order.
type speakSink struct {
	mu    sync.Mutex
	calls []string
}

func (s *speakSink) add(c string) { s.mu.Lock(); s.calls = append(s.calls, c); s.mu.Unlock() }
func (s *speakSink) Speak(_ context.Context, sp bot.Speaker) {
	s.add("speak " + sp.CardID + " " + sp.Name)
}
func (s *speakSink) Typing(context.Context)               { s.add("typing") }
func (s *speakSink) Update(context.Context, string) error { return nil }
func (s *speakSink) Finish(context.Context, string) error { s.add("finish"); return nil }
func (s *speakSink) Notice(context.Context, string) error { s.add("notice"); return nil }

// TestReplyNamesItsSpeaker: a sink that shows speakers learns the card
// before the reply starts; a notice alone (a refused message) names none.
func TestReplyNamesItsSpeaker(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "speak.db"))
	ctx := context.Background()
	card, _ := r.p.Cards().Default()
	s := &speakSink{}
	if err := r.p.Submit(ctx, bot.Event{In: inbound("speak", 1)}, s).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	want := "speak " + card.ID + " " + card.Name + "|typing|finish"
	if got := strings.Join(s.calls, "|"); got != want {
		t.Fatalf("reply calls %q, want %q", got, want)
	}
	refused := &speakSink{}
	in := inbound("speak", 2)
	in.Text = strings.Repeat("x", 1<<20)
	_ = r.p.Submit(ctx, bot.Event{In: in}, refused).Wait(ctx)
	if got := strings.Join(refused.calls, "|"); got != "notice" {
		t.Fatalf("a refused message made calls %q, want one notice", got)
	}
}
