package bot_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/jobs"
	"troupe/models"
)

// confirmSink records notices and the confirmation token.
type confirmSink struct {
	discardSink
	mu      sync.Mutex
	token   string
	expires time.Time
}

func (s *confirmSink) Confirm(_ context.Context, q, token string, exp time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token, s.expires = token, exp
	return nil
}

// forgetConfirmed runs /forget in channel ch as a member who may manage
// it, confirms it, and fails the test unless chat chatID is then gone. It
// returns the notices the asker got.
func forgetConfirmed(t *testing.T, p *bot.Pipeline, st *models.Store, ch, chatID string) []string {
	t.Helper()
	ctx := context.Background()
	admin := inbound(ch, 0)
	admin.CanManage = true
	sink := &confirmSink{}
	must(t, p.Exec(ctx, admin, bot.Command{Name: "forget"}, sink))
	if sink.token == "" {
		t.Fatalf("no confirmation asked: %q", sink.notices)
	}
	must(t, p.Answer(ctx, admin, sink.token, true, sink))
	if _, err := st.Chat(ctx, chatID); err == nil {
		t.Fatalf("the confirmed /forget left the chat; notices %q", sink.notices)
	}
	return sink.notices
}

func (s *confirmSink) last() string {
	if len(s.notices) == 0 {
		return ""
	}
	return s.notices[len(s.notices)-1]
}

func TestForgetPermissionsAndExpiry(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	guild := bot.ChannelRef{Platform: "discord", ID: "c1", SpaceKind: bot.SpaceGuild, SpaceID: "g1", Group: true}
	member := bot.Inbound{Channel: guild, AuthorID: "u1", AuthorName: "Ada", Text: "Hello", MessageID: "m1"}
	// A guild channel plays once a card is bound to it.
	must(t, r.p.Bind(ctx, guild, "lantern-keeper"))
	if err := handle(ctx, r.p, member, &discardSink{}); err != nil {
		t.Fatal(err)
	}
	ch, _ := r.st.Channel(ctx, guild.Key())
	chatID := ch.CurrentChatID

	// A member who cannot manage messages is refused.
	s := &confirmSink{}
	must(t, r.p.Exec(ctx, member, bot.Command{Name: "forget"}, s))
	if s.token != "" || !strings.Contains(s.last(), "manage messages") {
		t.Errorf("unprivileged /forget: token %q, notice %q", s.token, s.last())
	}

	admin := member
	admin.CanManage = true
	admin.AuthorID = "u2"
	s = &confirmSink{}
	must(t, r.p.Exec(ctx, admin, bot.Command{Name: "forget"}, s))
	if s.token == "" {
		t.Fatalf("no confirmation asked: %v", s.notices)
	}
	// Someone else cannot answer it.
	must(t, r.p.Answer(ctx, member, s.token, true, s))
	if _, err := r.st.Chat(ctx, chatID); err != nil {
		t.Fatalf("another member's answer forgot the chat")
	}
	// Cancel changes nothing.
	must(t, r.p.Answer(ctx, admin, s.token, false, s))
	if _, err := r.st.Chat(ctx, chatID); err != nil || !strings.Contains(s.last(), "Cancelled") {
		t.Fatalf("cancel: %v, %q", err, s.last())
	}
	// A pressed-again button is harmless.
	must(t, r.p.Answer(ctx, admin, s.token, true, s))
	if _, err := r.st.Chat(ctx, chatID); err != nil || !strings.Contains(s.last(), "expired or was already answered") {
		t.Fatalf("second press: %v, %q", err, s.last())
	}

	// An expired question does nothing.
	clock := time.Now()
	r2 := newBenchRigClock(t, func() time.Time { return clock })
	must(t, r2.p.Bind(ctx, guild, "lantern-keeper"))
	must(t, handle(ctx, r2.p, member, &discardSink{}))
	ch2, _ := r2.st.Channel(ctx, guild.Key())
	s = &confirmSink{}
	must(t, r2.p.Exec(ctx, admin, bot.Command{Name: "forget"}, s))
	clock = clock.Add(bot.ConfirmTTL + time.Second)
	must(t, r2.p.Answer(ctx, admin, s.token, true, s))
	if _, err := r2.st.Chat(ctx, ch2.CurrentChatID); err != nil {
		t.Fatalf("an expired confirmation forgot the chat")
	}

	// Confirmed: the chat is gone and the channel starts afresh.
	s = &confirmSink{}
	must(t, r.p.Exec(ctx, admin, bot.Command{Name: "forget"}, s))
	must(t, r.p.Answer(ctx, admin, s.token, true, s))
	if _, err := r.st.Chat(ctx, chatID); err == nil {
		t.Fatal("confirmed /forget left the chat")
	}
	ch, _ = r.st.Channel(ctx, guild.Key())
	if ch.CurrentChatID == "" || ch.CurrentChatID == chatID {
		t.Errorf("channel did not start a fresh chat: %q", ch.CurrentChatID)
	}
	var n int64
	r.st.DB().Model(&models.Message{}).Where("chat_id = ?", chatID).Count(&n)
	if n != 0 {
		t.Errorf("%d messages of the forgotten chat remain", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReplayedUnansweredMessageGetsItsReply(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	in := inbound("replay", 1)
	// The reply fails (as if the process died mid-reply): the message is kept.
	r.fake.Script(openaitestFault500())
	must(t, handle(ctx, r.p, in, &discardSink{}))
	before := r.fake.Count()
	// The platform delivers the same message again after a restart.
	must(t, handle(ctx, r.p, in, &discardSink{}))
	if r.fake.Count() == before {
		t.Fatal("the replayed, unanswered message got no reply")
	}
	// Delivered a third time, now answered: ignored.
	before = r.fake.Count()
	must(t, handle(ctx, r.p, in, &discardSink{}))
	if r.fake.Count() != before {
		t.Error("an answered duplicate was answered again")
	}
	var n int64
	r.st.DB().Model(&models.Message{}).Where("role = ?", "user").Count(&n)
	if n != 1 {
		t.Errorf("%d user messages stored, want 1", n)
	}
}

// TestForgetAnsweredOnAnotherProcess asks /forget on one pipeline and
// presses Confirm on another sharing the database and Redis (two serve
// replicas, or a restart in between): the question is kept in Redis, so the
// second one carries it out, once.
func TestForgetAnsweredOnAnotherProcess(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r, rds := rigOn(t, b)
			pipeline := func() *bot.Pipeline {
				return bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, Memory: r.mem, MemoryConfig: config.Default().Memory,
					Questions: jobs.NewQuestions(rds), Logger: slog.New(slog.DiscardHandler)})
			}
			asker, answerer := pipeline(), pipeline()
			ref := bot.ChannelRef{Platform: "telegram", ID: "7", SpaceKind: bot.SpaceUser, SpaceID: "7"}
			in := bot.Inbound{Channel: ref, AuthorID: "7", AuthorName: "Ada", Text: "Hello", MessageID: "1", CanManage: true}
			must(t, handle(ctx, asker, in, &discardSink{}))
			ch, _ := r.st.Channel(ctx, ref.Key())
			chatID := ch.CurrentChatID

			s := &confirmSink{}
			must(t, asker.Exec(ctx, in, bot.Command{Name: "forget"}, s))
			if s.token == "" {
				t.Fatalf("no confirmation asked: %v", s.notices)
			}
			// Someone else's press on the other process changes nothing and
			// leaves the question to its author.
			other := in
			other.AuthorID = "8"
			must(t, answerer.Answer(ctx, other, s.token, true, s))
			if _, err := r.st.Chat(ctx, chatID); err != nil || !strings.Contains(s.last(), "Only the person who asked") {
				t.Fatalf("another user's press: chat err %v, notice %q", err, s.last())
			}
			must(t, answerer.Answer(ctx, in, s.token, true, s))
			if _, err := r.st.Chat(ctx, chatID); err == nil {
				t.Fatalf("the confirmed /forget on the other process left the chat; notices %q", s.notices)
			}
			if !strings.Contains(strings.Join(s.notices, "\n"), "Forgotten:") {
				t.Errorf("no forgotten notice: %q", s.notices)
			}
			// The question is used up everywhere.
			must(t, asker.Answer(ctx, in, s.token, true, s))
			if !strings.Contains(s.last(), "expired or was already answered") {
				t.Errorf("second press on the asking process: %q", s.last())
			}
		})
	}
}
