package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// prose returns n characters of story text.
func prose(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "The tide pulls at the jetty while Maren counts the lamps, line %d. ", i)
	}
	return b.String()[:n]
}

// smallContextRig is a rig on b with a 2,048-token model whose fake API
// counts prompts with the o200k encoding, as a real one would.
func smallContextRig(t *testing.T, b testenv.Backend) *benchRig {
	t.Helper()
	r := newRigWith(t, b.DSN, nil, 2048)
	counter, err := prompt.NewTokenCounter("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	r.fake.SetPromptTokenCounter(counter.Count)
	return r
}

// turnRequests counts the chat turns the model was asked for.
func turnRequests(r *benchRig) int {
	n := 0
	for _, req := range r.fake.Requests() {
		if memorytest.Kind(req) == "" {
			n++
		}
	}
	return n
}

func currentChat(t *testing.T, st *models.Store, channel string) models.Chat {
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
	return chat
}

// TestOversizeMessageRefusedAtOnce: a message no prompt of the model can
// hold is refused at once with a notice saying so, stored as refused (off
// the branch, never sent), and the next normal message is answered: one
// oversize message does not wedge its chat. The 1 MB line stands for
// limits.max_message_chars: 0.
func TestOversizeMessageRefusedAtOnce(t *testing.T) {
	t.Parallel()
	for _, size := range []int{7002, 1 << 20} {
		for _, b := range testenv.Backends(t) {
			t.Run(fmt.Sprintf("%d/%s", size, b.Name), func(t *testing.T) {
				t.Parallel()
				r := smallContextRig(t, b)
				ctx := context.Background()
				if s := send(t, r, "big", 1, "I light the lamp by the door."); s.final == "" {
					t.Fatalf("first message not answered: %q", s.notices)
				}
				before := currentChat(t, r.st, "console:big")
				turnsBefore := turnRequests(r)
				huge := prose(size)
				s := send(t, r, "big", 2, huge)
				if s.final != "" || len(s.notices) != 1 || !strings.Contains(s.notices[0], "too long") {
					t.Fatalf("oversize message: reply %.40q, notices %q; want one refusal", s.final, s.notices)
				}
				if n := turnRequests(r); n != turnsBefore {
					t.Errorf("the oversize message reached the model (%d turn calls, want %d)", n, turnsBefore)
				}
				after := currentChat(t, r.st, "console:big")
				if after.HeadID != before.HeadID {
					t.Errorf("the refused message moved the chat's head")
				}
				refused, err := r.st.RefusedMessages(ctx, after.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(refused) != 1 || refused[0].Content != huge || refused[0].ParentID != before.HeadID || !refused[0].Refused {
					t.Fatalf("refused messages: %d (want 1 of %d characters under the head)", len(refused), size)
				}
				// Delivered again: ignored, not refused twice.
				if s := send(t, r, "big", 2, huge); s.final != "" || len(s.notices) != 0 {
					t.Errorf("a second delivery got reply %.40q, notices %q", s.final, s.notices)
				}
				s = send(t, r, "big", 3, "I set the lamp down and ask Maren about the storm.")
				if s.final == "" || len(s.notices) != 0 {
					t.Fatalf("the next message: reply %.40q, notices %q; want a reply", s.final, s.notices)
				}
				req := lastTurnRequest(t, r.fake)
				for _, m := range req.Messages {
					if strings.Contains(m.Content, huge[:200]) {
						t.Fatalf("the refused message was sent to the model")
					}
				}
			})
		}
	}
}

// failingTurns makes the rig's model fail every chat turn while fail is
// set; the scribe keeps answering memory prompts.
func failingTurns(r *benchRig, fail *atomic.Bool) {
	scribe := &memorytest.Scribe{Next: func(req openaitest.Request) openaitest.Answer {
		if fail.Load() {
			return openaitest.Answer{Fault: openaitest.Fault500}
		}
		return openaitest.DefaultResponder(req)
	}}
	r.fake.SetResponder(scribe.Respond)
}

// TestUnansweredPileStillCompacts: while the model fails, unanswered
// messages pile up in a row. They used to count as one beat, so nothing was
// ever old enough to compact and /compact, the automatic compaction and
// every later turn met a wedged chat. Now each is a beat to the planner:
// /compact and the automatic compaction both run, and once the model is
// back the next message is answered.
func TestUnansweredPileStillCompacts(t *testing.T) {
	t.Parallel()
	for _, manual := range []bool{true, false} {
		for _, b := range testenv.Backends(t) {
			t.Run(fmt.Sprintf("manual=%v/%s", manual, b.Name), func(t *testing.T) {
				t.Parallel()
				// Automatic compaction is tested on a window that holds the
				// whole pile, so only the trigger (not an overflowing prompt)
				// can start it.
				r := smallContextRig(t, b)
				if !manual {
					r = newRigWith(t, b.DSN, nil, 128000)
				}
				ctx := context.Background()
				var fail atomic.Bool
				failingTurns(r, &fail)
				n := 0
				for ; n < 3; n++ {
					if s := send(t, r, "pile", n, "I light the lamp by the door."); s.final == "" {
						t.Fatalf("message %d not answered: %q", n, s.notices)
					}
				}
				fail.Store(true)
				pile := 12
				if !manual {
					pile = 40 // keep (6) + period (30) beats, with the 3 before
				}
				for i := 0; i < pile; i++ {
					s := send(t, r, "pile", n, fmt.Sprintf("Message %d while the model is down. %s", i, prose(200)))
					n++
					if s.final != "" || len(s.notices) != 1 {
						t.Fatalf("unanswered message %d: reply %.40q, notices %q", i, s.final, s.notices)
					}
				}
				chat := currentChat(t, r.st, "console:pile")
				if manual {
					cmd, _ := bot.ParseCommand("/compact")
					s := &replySink{}
					in := inbound("pile", 0)
					in.MessageID, in.Text = "", "/compact"
					if err := r.p.Exec(ctx, in, cmd, s); err != nil {
						t.Fatal(err)
					}
					if len(s.notices) != 1 || !strings.HasPrefix(s.notices[0], "Compacted") {
						t.Fatalf("/compact answered %q", s.notices)
					}
				}
				sums, err := r.st.ChatSummaries(ctx, chat.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(sums) == 0 {
					t.Fatalf("%d unanswered messages were never compacted", pile)
				}
				br, err := r.st.LoadBranch(ctx, chat.HeadID)
				if err != nil {
					t.Fatal(err)
				}
				if want := 6 + 7*btoi(!manual); len(br.Uncovered) != want {
					// Automatic: due at the 36th beat (pile message 33 of
					// 40), which left the last 6; 7 more came since.
					t.Errorf("%d messages left uncovered, want %d", len(br.Uncovered), want)
				}
				fail.Store(false)
				s := send(t, r, "pile", n, "The lamp is lit again. What did I miss?")
				if s.final == "" {
					t.Fatalf("after the pile: reply %.40q, notices %q; want a reply", s.final, s.notices)
				}
			})
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCardFillingTheContextSaysSo: when the card alone fills the model's
// context, every message is refused with that reason (not the notice of a
// compaction that cannot help), and nothing is sent or queued.
func TestCardFillingTheContextSaysSo(t *testing.T) {
	t.Parallel()
	r := smallContextRig(t, testenv.Backends(t)[0])
	card, _ := r.p.Cards().Default()
	card.Description = prose(20000)
	lib, _ := cards.NewLibrary([]cards.Card{card}, "")
	p := bot.New(bot.Options{Store: r.st, Cards: lib, Model: r.client, Jobs: inlineJobs{r.mem}, Memory: r.mem, Tokens: prompt.NewEstimator(),
		MemoryConfig: config.Default().Memory, Language: "en", ContextWindow: 2048, MaxReplyTokens: 256})
	for i := 1; i <= 2; i++ {
		in := inbound("card", i)
		s := &replySink{}
		if err := handle(context.Background(), p, in, s); err != nil {
			t.Fatal(err)
		}
		if s.final != "" || len(s.notices) != 1 || !strings.Contains(s.notices[0], "card alone") {
			t.Fatalf("message %d: reply %.40q, notices %q", i, s.final, s.notices)
		}
	}
	if n := r.fake.Count(); n != 0 {
		t.Errorf("%d requests reached the model or the scribe, want none", n)
	}
}

// TestLongRecentBeatsLeftOutWithNotice: when even the last keep beats do
// not fit the window, the prompt leaves out their oldest messages and says
// so, instead of refusing every turn until /new; nothing sent is over the
// window and the message being answered is always there.
func TestLongRecentBeatsLeftOutWithNotice(t *testing.T) {
	t.Parallel()
	r := smallContextRig(t, testenv.Backends(t)[0])
	counter, err := prompt.NewTokenCounter("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	leftOut := 0
	for i := 1; i <= 8; i++ {
		text := fmt.Sprintf("Long beat %d. %s", i, prose(1500))
		s := send(t, r, "long", i, text)
		if s.final == "" {
			t.Fatalf("beat %d not answered: %q", i, s.notices)
		}
		for _, n := range s.notices {
			if strings.Contains(n, "left out of this reply") {
				leftOut++
			}
		}
		req := lastTurnRequest(t, r.fake)
		var all []string
		for _, m := range req.Messages {
			all = append(all, m.Content)
		}
		if n := counter.Count(strings.Join(all, "\n")); n > 2048-256 {
			t.Errorf("beat %d sent %d tokens, over %d", i, n, 2048-256)
		}
		if last := req.Messages[len(req.Messages)-1].Content; !strings.HasPrefix(last, fmt.Sprintf("Long beat %d.", i)) {
			t.Errorf("beat %d: the prompt ends with %.20q", i, last)
		}
	}
	if leftOut == 0 {
		t.Errorf("recent beats were left out without a word")
	}
}
