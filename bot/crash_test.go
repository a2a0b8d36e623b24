package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/models"
)

// recSink records the replies and notices a turn writes.
type recSink struct {
	mu       sync.Mutex
	replies  []string
	notices  []string
	finished chan struct{}
}

func newRecSink() *recSink { return &recSink{finished: make(chan struct{}, 16)} }

func (*recSink) Typing(context.Context)               {}
func (*recSink) Update(context.Context, string) error { return nil }
func (s *recSink) Finish(_ context.Context, text string) error {
	s.mu.Lock()
	s.replies = append(s.replies, text)
	s.mu.Unlock()
	s.finished <- struct{}{}
	return nil
}
func (s *recSink) Notice(_ context.Context, text string) error {
	s.mu.Lock()
	s.notices = append(s.notices, text)
	s.mu.Unlock()
	s.finished <- struct{}{}
	return nil
}

func (s *recSink) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.finished:
	case <-time.After(20 * time.Second):
		t.Fatalf("no reply or notice: %s", what)
	}
}

// branchOf returns the roles and texts of a channel's current branch.
func branchOf(t *testing.T, st *models.Store, channel string) []models.Message {
	t.Helper()
	ctx := context.Background()
	ch, err := st.Channel(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := st.Chat(ctx, ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	br, err := st.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		t.Fatal(err)
	}
	return br.Uncovered
}

// TestHolderThatLostItsLockCannotWrite: a process whose channel lock
// expired under it (a pause longer than the TTL) while its model call ran
// is overtaken by another process, which stores and answers the channel;
// the first one's late reply is refused by the store's head check, so the
// chat stays one linear branch with no reply written "as if" it still held
// the lock.
func TestHolderThatLostItsLockCannotWrite(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r, rds := rigOn(t, b)
			st2, err := models.Open(ctx, b.dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			asked := make(chan struct{}, 4)
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				first := strings.Contains(req.Messages[len(req.Messages)-1].Content, "first")
				asked <- struct{}{}
				if first {
					<-release
				}
				return openaitest.DefaultResponder(req)
			})
			client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1}, nil)
			newP := func(st *models.Store) *bot.Pipeline {
				l := jobs.NewLocker(rds)
				l.TTL = 900 * time.Millisecond
				return bot.New(bot.Options{Store: st, Cards: r.p.Cards(), Model: client, MemoryConfig: config.Default().Memory, Locker: l, Logger: slog.New(slog.DiscardHandler)})
			}
			p1, p2 := newP(r.st), newP(st2)
			in1 := inbound("lost", 1)
			in1.Text = "The first question."
			s1 := newRecSink()
			go func() { _ = handle(ctx, p1, in1, s1) }()
			<-asked
			// The pause: p1's lock expires while its model call runs.
			if err := rds.Client.Del(ctx, "troupe:lock:channel:console:lost").Err(); err != nil {
				t.Fatal(err)
			}
			in2 := inbound("lost", 2)
			in2.Text = "The second question."
			s2 := newRecSink()
			if err := handle(ctx, p2, in2, s2); err != nil {
				t.Fatal(err)
			}
			if len(s2.replies) != 1 {
				t.Fatalf("the process that took over did not answer: replies %q notices %q", s2.replies, s2.notices)
			}
			once.Do(func() { close(release) })
			s1.wait(t, "the overtaken process")
			if len(s1.replies) != 0 {
				t.Errorf("the process that lost its lock delivered a reply it could not store: %q", s1.replies)
			}
			var roles []string
			for _, m := range branchOf(t, r.st, "console:lost") {
				roles = append(roles, m.Role+":"+m.Content[:min(len(m.Content), 12)])
			}
			want := "user:The first qu|user:The second q|assistant:reply"
			if got := strings.Join(roles, "|"); len(roles) != 4 || !strings.HasPrefix(strings.Join(roles[1:], "|"), want) {
				t.Errorf("branch %s, want the greeting then %s", got, want)
			}
			var replies int64
			r.st.DB().Model(&models.Message{}).Where("role = ? AND content LIKE ?", "assistant", "reply%").Count(&replies)
			if replies != 1 {
				t.Errorf("%d replies stored, want 1 (the late one refused)", replies)
			}
		})
	}
}

// TestResumeAnswersWhatADeadProcessLeft: a process died after accepting a
// message (it waits in the inbox) in one channel, and after storing one but
// before answering it in another. A restarted pipeline's Resume answers
// both through the sinks it is given, and a later second delivery of the
// accepted message is not stored again.
func TestResumeAnswersWhatADeadProcessLeft(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+t.TempDir()+"/t.db")
	ctx := context.Background()
	// Channel "open": a turn stored its message, then the process died.
	r.fake.Script(openaitestFault500())
	must(t, handle(ctx, r.p, inbound("open", 1), &discardSink{}))
	// Channel "inbox": the message was accepted, never stored in a chat.
	waitingIn := inbound("inbox", 7)
	ref, _ := json.Marshal(waitingIn.Channel)
	key := waitingIn.Channel.Key() + ":" + waitingIn.MessageID
	if _, err := r.st.Accept(ctx, &models.InboxMessage{ChannelID: waitingIn.Channel.Key(), Platform: "console", Ref: string(ref),
		AuthorID: "ada", AuthorName: "Ada", Content: waitingIn.Text, DedupKey: &key}); err != nil {
		t.Fatal(err)
	}
	// Another platform's channel is not this process's to answer.
	other := bot.ChannelRef{Platform: "console", ID: "elsewhere", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
	oref, _ := json.Marshal(other)
	if _, err := r.st.Accept(ctx, &models.InboxMessage{ChannelID: other.Key(), Platform: "console", Ref: string(oref), Content: "not mine"}); err != nil {
		t.Fatal(err)
	}

	// The restarted process: a new pipeline on the same store.
	p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory})
	sinks := map[string]*recSink{"console:open": newRecSink(), "console:inbox": newRecSink()}
	must(t, p.Resume(ctx, "console", func(ref bot.ChannelRef) (bot.Sink, bool) {
		s, ok := sinks[ref.Key()]
		return s, ok
	}))
	for k, s := range sinks {
		s.wait(t, k)
		if len(s.replies) != 1 {
			t.Errorf("%s: replies %q, notices %q", k, s.replies, s.notices)
		}
	}
	for _, ch := range []string{"console:open", "console:inbox"} {
		br := branchOf(t, r.st, ch)
		if last := br[len(br)-1]; last.Role != "assistant" {
			t.Errorf("%s ends on an unanswered %s message", ch, last.Role)
		}
	}
	if left, _ := r.st.Inbox(ctx, other.Key()); len(left) != 1 {
		t.Errorf("a channel this process does not serve was touched: %d waiting", len(left))
	}
	before := r.fake.Count()
	must(t, handle(ctx, p, waitingIn, &discardSink{}))
	if r.fake.Count() != before {
		t.Errorf("a second delivery of an answered message was answered again")
	}
	var n int64
	r.st.DB().Model(&models.Message{}).Where("dedup_key = ?", key).Count(&n)
	if n != 1 {
		t.Errorf("the accepted message is stored %d times, want 1", n)
	}
}

// TestMessageWithoutACardDoesNotWait: a message in a channel with no card
// is refused with a notice and does not stay in the inbox, where every
// later turn or restart would pick it up again.
func TestMessageWithoutACardDoesNotWait(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+t.TempDir()+"/t.db")
	ctx := context.Background()
	empty, err := cards.NewLibrary(nil, "")
	must(t, err)
	p := bot.New(bot.Options{Store: r.st, Cards: empty, Model: r.client, MemoryConfig: config.Default().Memory})
	s := &discardSink{}
	must(t, handle(ctx, p, inbound("nocard", 1), s))
	if len(s.notices) != 1 {
		t.Fatalf("notices %q, want the no-card notice", s.notices)
	}
	if left, err := r.st.Inbox(ctx, "console:nocard"); err != nil || len(left) != 0 {
		t.Errorf("%d refused messages wait in the inbox (%v)", len(left), err)
	}
}

// TestInboxSweepTakesMessagesADeadPeerLeft: while this process runs, a
// peer that died leaves an accepted message in the inbox of a channel that
// gets no new message; the periodic sweep answers it. A message that has
// only just arrived belongs to a live process and is left to it.
func TestInboxSweepTakesMessagesADeadPeerLeft(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+t.TempDir()+"/t.db")
	ctx := context.Background()
	p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory, InboxSweep: 50 * time.Millisecond})
	defer p.Close(ctx)
	sinks := map[string]*recSink{"console:orphan": newRecSink(), "console:young": newRecSink()}
	must(t, p.Resume(ctx, "console", func(ref bot.ChannelRef) (bot.Sink, bool) {
		s, ok := sinks[ref.Key()]
		return s, ok
	}))
	for _, ch := range []string{"orphan", "young"} {
		in := inbound(ch, 1)
		ref, _ := json.Marshal(in.Channel)
		m := &models.InboxMessage{ChannelID: in.Channel.Key(), Platform: "console", Ref: string(ref), AuthorID: "ada", AuthorName: "Ada", Content: in.Text}
		if _, err := r.st.Accept(ctx, m); err != nil {
			t.Fatal(err)
		}
		if ch == "orphan" {
			must(t, r.st.DB().Model(m).Update("created_at", time.Now().Add(-time.Minute)).Error)
		}
	}
	sinks["console:orphan"].wait(t, "the orphaned message")
	if got := sinks["console:orphan"].replies; len(got) != 1 {
		t.Errorf("orphan: replies %q", got)
	}
	if left, _ := r.st.Inbox(ctx, "console:young"); len(left) != 1 {
		t.Errorf("the sweep took a message that had only just arrived")
	}
}

// lockedAfterATurn starts a pipeline on b that takes the channel's lock
// through Redis, plays one turn in channel ch and then holds that lock, as
// another process would: a turn queued now waits for unlock.
func lockedAfterATurn(t *testing.T, b sharedBackend, ch string) (r *benchRig, p *bot.Pipeline, unlock func()) {
	t.Helper()
	ctx := context.Background()
	r, rds := rigOn(t, b)
	client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1}, nil)
	p = bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: client, MemoryConfig: config.Default().Memory, Locker: jobs.NewLocker(rds), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	first := newRecSink()
	if err := handle(ctx, p, inbound(ch, 1), first); err != nil || len(first.replies) != 1 {
		t.Fatalf("first turn: err %v, replies %q", err, first.replies)
	}
	unlock, err := jobs.NewLocker(rds).Lock(ctx, "channel:console:"+ch)
	if err != nil {
		t.Fatal(err)
	}
	return r, p, unlock
}

// answeredNewestOnly checks that one turn took both messages sent after
// lockedAfterATurn's first: the newer one's sink got the one reply, the
// older one's nothing, and the branch holds all three user messages.
func answeredNewestOnly(t *testing.T, r *benchRig, ch string, older, newer *recSink) {
	t.Helper()
	newer.wait(t, "the newest message")
	if len(newer.replies) != 1 || len(older.replies)+len(older.notices) != 0 {
		t.Errorf("older got %q %q, newer %q %q; want one reply, to the newest message",
			older.replies, older.notices, newer.replies, newer.notices)
	}
	var users []string
	for _, m := range branchOf(t, r.st, "console:"+ch) {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 3 {
		t.Errorf("branch holds user messages %q, want 3", users)
	}
}

// TestMessagesThatArriveDuringTheLockWaitJoinTheTurn: a turn that waits for
// the channel's lock (another process holds it, or a turn resumed at
// start-up is about to take the inbox) takes the messages that came
// meanwhile into its batch, so the reply answers the newest of them
// through its sink, not the sink of a message whose row it took anyway.
func TestMessagesThatArriveDuringTheLockWaitJoinTheTurn(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r, p, unlock := lockedAfterATurn(t, b, "wait")
			early, late := newRecSink(), newRecSink()
			ran := make(chan error, 1)
			go func() { ran <- handle(ctx, p, inbound("wait", 2), early) }()
			// The second message's turn is the lane's runner, waiting for
			// the lock; the third queues behind it: Submit returns once it
			// is stored and ordered.
			deadline := time.Now().Add(10 * time.Second)
			for {
				rows, err := r.st.Inbox(ctx, "console:wait")
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the second message never waited in the inbox (%d rows)", len(rows))
				}
				time.Sleep(10 * time.Millisecond)
			}
			third := p.Submit(ctx, bot.Event{In: inbound("wait", 3)}, late)
			if third.Ignored() {
				t.Fatal("the third message was ignored")
			}
			if err := third.Admitted(ctx); err != nil {
				t.Fatal(err)
			}
			unlock()
			if err := <-ran; err != nil {
				t.Fatal(err)
			}
			if err := third.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			answeredNewestOnly(t, r, "wait", early, late)
		})
	}
}

// A message's call stores it, then joins its channel's lane; a call that
// stored later can join first (CI caught it in
// TestMessagesThatArriveDuringTheLockWaitJoinTheTurn). The turn that takes
// both answers the newest stored, whichever joined first.
func TestATurnAnswersTheNewestStoredMessageWhicheverJoinedFirst(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r, p, unlock := lockedAfterATurn(t, b, "order")
			older, newer := newRecSink(), newRecSink()
			first, queueOlder := p.AdmitThenQueue(ctx, inbound("order", 2), older)
			if err := first.Admitted(ctx); err != nil {
				t.Fatal(err)
			}
			// The newer message joins the empty lane first and waits for the
			// lock; the older one joins behind it.
			second := p.Submit(ctx, bot.Event{In: inbound("order", 3)}, newer)
			if err := second.Admitted(ctx); err != nil {
				t.Fatal(err)
			}
			queueOlder()
			unlock()
			for _, rc := range []bot.Receipt{second, first} {
				if err := rc.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			answeredNewestOnly(t, r, "order", older, newer)
		})
	}
}

// TestResumeReadBeforeAMoveDoesNotUndoIt: Resume reads a channel left on an
// unanswered message, in the space the channel was in then, and queues its
// turn only after a message from the platform has said the channel is now
// in another space (a Discord channel made private). The message's space
// wins, whether the resume shares the message's turn or takes a turn of
// its own after it: the channel moves once, and the reply is in a new chat
// in the new space.
func TestResumeReadBeforeAMoveDoesNotUndoIt(t *testing.T) {
	for _, b := range sharedBackends(t) {
		for _, joined := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/joined=%v", b.name, joined), func(t *testing.T) {
				ctx := context.Background()
				r, rds := rigOn(t, b)
				name := fmt.Sprintf("moved-%v", joined) // the embedded Redis is the process's
				locker := jobs.NewLocker(rds)
				p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory, Locker: locker})
				defer p.Close(ctx)
				r.fake.Script(openaitestFault500())
				must(t, handle(ctx, p, inbound(name, 1), &discardSink{}))
				ch, err := r.st.Channel(ctx, "console:"+name)
				must(t, err)
				before := ch.CurrentChatID

				// Resume has read the channel in its old space, and is slow to
				// queue its turn.
				gate, resumed := make(chan struct{}), make(chan error, 1)
				go func() {
					resumed <- p.Resume(ctx, "console", func(ref bot.ChannelRef) (bot.Sink, bool) {
						<-gate
						return &discardSink{}, ref.Key() == "console:"+name
					})
				}()
				moved := inbound(name, 2)
				moved.Channel.SpaceID = "hidden"
				sink := newRecSink()
				var unlock func()
				if joined {
					// The message's turn waits for the channel's lock while
					// the resume comes, and takes it into the same turn.
					unlock, err = locker.Lock(ctx, "channel:console:"+name)
					must(t, err)
				}
				rc := p.Submit(ctx, bot.Event{In: moved}, sink)
				if !joined {
					must(t, rc.Wait(ctx))
				}
				close(gate)
				must(t, <-resumed)
				if joined {
					time.Sleep(100 * time.Millisecond) // the resume's turn is queued
					unlock()
					must(t, rc.Wait(ctx))
				}
				ch, err = r.st.Channel(ctx, "console:"+name)
				must(t, err)
				opened := ch.CurrentChatID
				// Whatever the resume's own turn does, it has done once the
				// channel's lane is idle: a message after it runs after it.
				last := inbound(name, 3)
				last.Channel.SpaceID = "hidden"
				must(t, handle(ctx, p, last, newRecSink()))

				ch, err = r.st.Channel(ctx, "console:"+name)
				must(t, err)
				if want := moved.Channel.Space(); ch.SpaceID != want || ch.CurrentChatID == before || ch.CurrentChatID != opened {
					t.Fatalf("channel in %s with chat %s, want the chat %s the move opened in %s (the old chat was %s)", ch.SpaceID, ch.CurrentChatID, opened, want, before)
				}
				chat, err := r.st.Chat(ctx, ch.CurrentChatID)
				must(t, err)
				if chat.SpaceID != moved.Channel.Space() {
					t.Errorf("the current chat is in %s", chat.SpaceID)
				}
				if n := len(sink.replies); n != 1 {
					t.Errorf("the moved message got %d replies (%q), notices %q", n, sink.replies, sink.notices)
				}
				for _, m := range branchOf(t, r.st, "console:"+name) {
					if strings.Contains(m.Content, "Beat 1:") {
						t.Errorf("the old space's message is in the new chat: %q", m.Content)
					}
				}
			})
		}
	}
}

// heldStore holds, once armed, a turn of channel just before it reads the
// channel's state and waiting messages (TurnState), until resume closes.
type heldStore struct {
	bot.Store
	channel         string
	armed           atomic.Bool
	reading, resume chan struct{}
}

func (s *heldStore) TurnState(ctx context.Context, channelID, userKey string) (models.TurnState, error) {
	if channelID == s.channel && s.armed.CompareAndSwap(true, false) {
		close(s.reading)
		<-s.resume
	}
	return s.Store.TurnState(ctx, channelID, userKey)
}

// TestResumeAheadOfAMoveLeavesItsMessage: Resume's turn runs ahead of a
// message that says the channel is now in another space (a Discord channel
// made private), and reads the channel's waiting messages after that one
// came. The message is not the resume's to store in the old space's chat:
// its own turn moves the channel and stores it in a new chat there.
func TestResumeAheadOfAMoveLeavesItsMessage(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newBenchRig(t, b.dsn)
			const name = "ahead"
			st := &heldStore{Store: r.st, channel: "console:" + name, reading: make(chan struct{}), resume: make(chan struct{})}
			p := bot.New(bot.Options{Store: st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory})
			defer p.Close(ctx)
			r.fake.Script(openaitestFault500())
			must(t, handle(ctx, p, inbound(name, 1), &discardSink{}))
			ch, err := r.st.Channel(ctx, "console:"+name)
			must(t, err)
			before := ch.CurrentChatID

			// The resume's turn has read the channel in its old space; the
			// message comes before it reads what waits there.
			st.armed.Store(true)
			must(t, p.Resume(ctx, "console", func(ref bot.ChannelRef) (bot.Sink, bool) {
				return &discardSink{}, ref.Key() == "console:"+name
			}))
			<-st.reading
			moved := inbound(name, 2)
			moved.Channel.SpaceID = "hidden"
			sink := newRecSink()
			rc := p.Submit(ctx, bot.Event{In: moved}, sink)
			close(st.resume)
			must(t, rc.Wait(ctx))

			ch, err = r.st.Channel(ctx, "console:"+name)
			must(t, err)
			if want := moved.Channel.Space(); ch.SpaceID != want || ch.CurrentChatID == before {
				t.Fatalf("channel in %s with chat %s, want a new chat in %s (the old chat was %s)", ch.SpaceID, ch.CurrentChatID, want, before)
			}
			if n := len(sink.replies); n != 1 {
				t.Errorf("the moved message got %d replies (%q), notices %q", n, sink.replies, sink.notices)
			}
			var found bool
			for _, m := range branchOf(t, r.st, "console:"+name) {
				found = found || strings.Contains(m.Content, "Beat 2:")
				if strings.Contains(m.Content, "Beat 1:") {
					t.Errorf("the old space's message is in the new chat: %q", m.Content)
				}
			}
			if !found {
				t.Errorf("the moved message is not in the new chat")
			}
			old, err := r.st.Chat(ctx, before)
			must(t, err)
			br, err := r.st.LoadBranch(ctx, old.HeadID)
			must(t, err)
			for _, m := range br.Uncovered {
				if strings.Contains(m.Content, "Beat 2:") {
					t.Errorf("the moved message is in the old space's chat: %q", m.Content)
				}
			}
		})
	}
}
