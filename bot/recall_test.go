package bot_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// recallBlock returns the turn's own recall block in the last chat
// request: the system message just before the new user message(s), when it
// carries the [Remembered] header; "" when there is none. Blocks kept from
// earlier turns, further up, are not it.
func recallBlock(t *testing.T, fake *openaitest.Server) string {
	t.Helper()
	msgs := lastChatPrompt(t, fake)
	i := len(msgs)
	for i > 0 && msgs[i-1].Role != "user" {
		i-- // post-history instructions
	}
	for i > 0 && msgs[i-1].Role == "user" {
		i--
	}
	if i > 0 && msgs[i-1].Role == "system" && strings.Contains(msgs[i-1].Content, "[Remembered]") {
		return msgs[i-1].Content
	}
	return ""
}

// lastChatPrompt returns the messages of the last chat request.
func lastChatPrompt(t *testing.T, fake *openaitest.Server) []openaitest.Message {
	t.Helper()
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Stream {
			return reqs[i].Messages
		}
	}
	t.Fatal("no chat turn was sent")
	return nil
}

// newCompassRig is a recall rig with diagnostics on whose channel ch holds
// a chat where Ada buried the brass compass, then looked at the sea.
func newCompassRig(t *testing.T, b testenv.Backend, ch string) *recordRig {
	t.Helper()
	r := newRecallRig(t, b, 1)
	r.opt.Recall.Diagnostics = true
	r.p = bot.New(r.opt)
	r.say(t, ch, 1, "Ada", "I buried the brass compass under the old oak.")
	r.say(t, ch, 3, "Ada", "*I look at the sea for a while.*")
	return r
}

// What the character perceived in an earlier chat comes back when the
// player's message names it; what nothing cues stays out; a time cap
// leaves the block out and the turn goes on; recalling counts, and /why
// shows why (with diagnostics on) without the scores reaching the model.
func TestRecallBringsBackWhatTheCharacterPerceived(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newCompassRig(t, b, "rc")
			var compass models.Perception
			if err := r.st.DB().Where("text LIKE ?", "%brass compass%").Take(&compass).Error; err != nil {
				t.Fatalf("the compass was not recorded: %v", err)
			}
			r.exec(t, "rc", "new")
			r.say(t, "rc", 4, "Ada", "Where did I bury the brass compass?")
			block := recallBlock(t, r.fake)
			if !strings.Contains(block, "I buried the brass compass under the old oak.") {
				t.Fatalf("the recall block lacks the compass:\n%s", block)
			}
			if strings.Contains(block, "Juniper") {
				t.Errorf("a memory nothing cued came along:\n%s", block)
			}
			if strings.Contains(block, "0.") || strings.Contains(block, "relevance") {
				t.Errorf("a score reached the model:\n%s", block)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				var p models.Perception
				r.st.DB().Where("id = ?", compass.ID).Take(&p)
				if p.RecallCount == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("recall count %d, want 1", p.RecallCount)
				}
				time.Sleep(10 * time.Millisecond)
			}
			why := r.exec(t, "rc", "why")
			if !strings.Contains(why, "I buried the brass compass") || !strings.Contains(why, "picked (mmr") || !strings.Contains(why, "relevance") {
				t.Errorf("/why = %q", why)
			}
			// The same question, with recall held past its cap.
			opt := r.opt
			opt.Recall.Timeout = 50 * time.Millisecond
			opt.RecallDelay = func(ctx context.Context) { <-ctx.Done() }
			r.p = bot.New(opt)
			r.say(t, "rc", 5, "Ada", "Where did I bury the brass compass?")
			if block := recallBlock(t, r.fake); block != "" {
				t.Errorf("recall over its time still gave a block:\n%s", block)
			}
			// Off: no block, and /why says diagnostics are off.
			opt = r.opt
			opt.Recall.Enabled, opt.Recall.Diagnostics = false, false
			r.p = bot.New(opt)
			r.say(t, "rc", 6, "Ada", "Where did I bury the brass compass?")
			if block := recallBlock(t, r.fake); block != "" {
				t.Errorf("recall.enabled false still gave a block:\n%s", block)
			}
			if why := r.exec(t, "rc", "why"); !strings.Contains(why, "recall.diagnostics") {
				t.Errorf("/why with diagnostics off = %q", why)
			}
		})
	}
}

// TestRecallCuesEverythingUnanswered: a one-card turn's recall starts from
// the messages the turn stores, while they are stored, and that one search
// is the turn's. When an earlier message went unanswered (the model
// failed on it) the branch shows more that is new to the character: recall
// searches again, with that message among the cues.
func TestRecallCuesEverythingUnanswered(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			var searches atomic.Int32
			r.opt.RecallDelay = func(context.Context) { searches.Add(1) }
			r.p = bot.New(r.opt)
			r.say(t, "rc", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "rc", 2, "Ada", "My grey mare is called Juniper.")
			r.exec(t, "rc", "new")
			searches.Store(0)
			r.say(t, "rc", 3, "Ada", "What a fine morning.")
			if n := searches.Load(); n != 1 {
				t.Errorf("%d recall searches for one turn, want 1", n)
			}
			// The model fails on the question: it stays unanswered.
			var fail atomic.Bool
			fail.Store(true)
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				if req.Stream && fail.CompareAndSwap(true, false) {
					return openaitest.Answer{Fault: openaitest.Fault500}
				}
				return r.scribe.Respond(req)
			})
			r.say(t, "rc", 4, "Ada", "Where did I bury the brass compass?")
			if fail.Load() {
				t.Fatal("the model was not asked")
			}
			searches.Store(0)
			r.say(t, "rc", 5, "Ada", "Please, tell me.")
			if block := recallBlock(t, r.fake); !strings.Contains(block, "brass compass") {
				t.Errorf("the unanswered question cued nothing:\n%s", block)
			}
			if n := searches.Load(); n != 2 {
				t.Errorf("%d recall searches after an unanswered message, want 2 (the stored message's, then the branch's)", n)
			}
		})
	}
}

// slowNotes writes a turn's recall record (counts and diagnostic) late, as
// a loaded database does.
type slowNotes struct {
	bot.Store
	delay time.Duration
}

func (s slowNotes) NoteRecall(ctx context.Context, d models.RecallDone) error {
	time.Sleep(s.delay)
	return s.Store.NoteRecall(ctx, d)
}

// TestWhyRightAfterAReplyShowsThatTurn: the recall record is written off
// the turn's path; /why sent as soon as the reply came shows that turn's
// recall, not the turn before it (a flake of the console's /why test on a
// loaded CI machine).
func TestWhyRightAfterAReplyShowsThatTurn(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newCompassRig(t, b, "wy")
			r.exec(t, "wy", "new")
			r.say(t, "wy", 4, "Ada", "*I wait.*")
			if why := r.exec(t, "wy", "why"); strings.Contains(why, "brass compass") {
				t.Fatalf("a turn nothing cued recalled the compass: %q", why)
			}
			r.opt.Store = slowNotes{Store: r.opt.Store, delay: 400 * time.Millisecond}
			r.p = bot.New(r.opt)
			r.say(t, "wy", 5, "Ada", "Where did I bury the brass compass?")
			if why := r.exec(t, "wy", "why"); !strings.Contains(why, "I buried the brass compass") {
				t.Errorf("/why right after the reply = %q, want the compass this turn recalled", why)
			}
		})
	}
}
