package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
)

func TestCreatorNotesNeverSent(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	must(t, handle(context.Background(), r.p, inbound("notes", 1), &discardSink{}))
	last, _ := r.fake.Last()
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "An example card shipped with troupe") {
			t.Fatal("creator_notes reached the model")
		}
	}
	if !strings.Contains(last.Messages[0].Content, "Gull Rock") {
		t.Errorf("the card's description is missing from the system message")
	}
}

func TestCompactCommandAnswers(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	must(t, handle(ctx, r.p, inbound("c", 1), &discardSink{}))
	s := &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "nothing old enough to compact") {
		t.Errorf("few beats: %v", s.notices)
	}
	for i := 2; i <= 12; i++ {
		must(t, handle(ctx, r.p, inbound("c", i), &discardSink{}))
	}
	s = &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "Compacted") {
		t.Errorf("12 beats: %v", s.notices)
	}
	// While a reply is being written, /compact says so.
	r.fake.Script(openaitest.Answer{Text: "A slow reply.", Latency: 500 * time.Millisecond})
	done := make(chan error, 1)
	before := len(r.fake.Requests())
	go func() { done <- handle(ctx, r.p, inbound("c", 13), &discardSink{}) }()
	// The reply is being written once its request reached the model.
	for deadline := time.Now().Add(5 * time.Second); len(r.fake.Requests()) == before; {
		if time.Now().After(deadline) {
			t.Fatal("the slow reply never reached the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s = &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "A reply is being written") {
		t.Errorf("during a reply: %v", s.notices)
	}
	must(t, <-done)
}
