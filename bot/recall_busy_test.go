package bot_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/models/testenv"
)

// heldRecallRig is a recall rig with one pipeline slot, kept blocks off
// (so a block shows its items again) and recall.busy_wait 200 ms (the reload by id gets twice that, which a loaded test machine needs); setting
// hold holds the next search until its context ends, and held says when.
func heldRecallRig(t *testing.T, b testenv.Backend) (r *recordRig, hold *atomic.Bool, held chan struct{}, modes *recallModes) {
	r = newRecallRig(t, b, 1)
	hold, held, modes = new(atomic.Bool), make(chan struct{}, 1), &recallModes{}
	r.opt.Observer = modes
	r.opt.ConcurrentTurns = 1
	r.opt.Recall.KeptChars = 0
	r.opt.Recall.Timeout = 3 * time.Second
	r.opt.Recall.BusyWait = 200 * time.Millisecond
	r.opt.RecallDelay = func(ctx context.Context) {
		if hold.CompareAndSwap(true, false) {
			held <- struct{}{}
			<-ctx.Done()
		}
	}
	r.p = bot.New(r.opt)
	return r, hold, held, modes
}

// sayUnderLoad says text in channel ch with its recall search held, while
// a turn in another channel waits for the pipeline's only slot, and
// returns how long the turn took.
func sayUnderLoad(t *testing.T, r *recordRig, hold *atomic.Bool, held chan struct{}, ch string, n int, text string) time.Duration {
	t.Helper()
	hold.Store(true)
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	var took time.Duration
	go func() {
		defer wg.Done()
		r.say(t, ch, n, "Ada", text)
		took = time.Since(start)
	}()
	<-held
	go func() {
		defer wg.Done()
		r.say(t, "other-"+ch, n, "Bea", "Good evening.")
	}()
	wg.Wait()
	return took
}

// recallModes records how each answered turn's recall went.
type recallModes struct {
	mu     sync.Mutex
	modes  []string
	panics []string
}

func (o *recallModes) TurnObserved(s bot.TurnStats) {
	if s.Outcome == "answered" {
		o.mu.Lock()
		o.modes = append(o.modes, s.Recall)
		o.mu.Unlock()
	}
}
func (o *recallModes) Forgotten(string)  {}
func (o *recallModes) SendFailed(string) {}
func (o *recallModes) Panicked(where string) {
	o.mu.Lock()
	o.panics = append(o.panics, where)
	o.mu.Unlock()
}

func (o *recallModes) last() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.modes) == 0 {
		return ""
	}
	return o.modes[len(o.modes)-1]
}

func (o *recallModes) count(mode string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, m := range o.modes {
		if m == mode {
			n++
		}
	}
	return n
}

// blockFor returns the recall block of the chat request that asked
// question; "" when it has none.
func blockFor(t *testing.T, fake *openaitest.Server, question string) string {
	t.Helper()
	for _, req := range fake.Requests() {
		if !req.Stream {
			continue
		}
		msgs := req.Messages
		at := -1
		for i, m := range msgs {
			if m.Role == "user" && strings.Contains(m.Content, question) {
				at = i
			}
		}
		if at < 0 {
			continue
		}
		i := at
		for i > 0 && msgs[i-1].Role == "user" {
			i--
		}
		if i > 0 && msgs[i-1].Role == "system" && strings.Contains(msgs[i-1].Content, "[Remembered]") {
			return msgs[i-1].Content
		}
		return ""
	}
	t.Fatalf("no chat request asked %q", question)
	return ""
}

// Under load recall does not make a turn wait behind its search: when
// another turn waits for the pipeline's only slot and this turn's search
// has not answered within recall.busy_wait, the turn loads again, by id,
// what its chat's last search ranked, and goes on with that block. The
// search it left is never answered here (it would be, on main, only past
// recall.timeout, with no block). Without a waiting turn the same held
// search is waited for (the control).
func TestRecallUnderLoadUsesTheChatsLastRanking(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, hold, held, modes := heldRecallRig(t, b)
			compass := "I buried the brass compass under the old oak."
			r.say(t, "rb", 1, "Ada", compass)
			r.say(t, "rb", 3, "Ada", "*I look at the sea for a while.*")
			r.exec(t, "rb", "new")
			r.say(t, "rb", 4, "Ada", "Where did I bury the brass compass?")
			if block := blockFor(t, r.fake, "Where did I bury the brass compass?"); !strings.Contains(block, compass) {
				t.Fatalf("the first question's block lacks the compass:\n%s", block)
			}
			if m := modes.last(); m != bot.RecallFull {
				t.Fatalf("an unloaded turn's recall went %q, want %q", m, bot.RecallFull)
			}

			// The next question's search is held; a turn in another
			// channel waits for the slot meanwhile.
			ask := "Is the brass compass still under the oak?"
			took := sayUnderLoad(t, r, hold, held, "rb", 5, ask)
			block := blockFor(t, r.fake, ask)
			if !strings.Contains(block, compass) {
				t.Fatalf("under load the turn whose search was late has no block from its chat's last ranking:\n%s", block)
			}
			if n := modes.count(bot.RecallCached); n != 1 {
				t.Errorf("%d turns recalled from a cached ranking, want 1 (modes %v)", n, modes.modes)
			}
			if took >= r.opt.Recall.Timeout {
				t.Errorf("the turn took %s, past recall.timeout %s: it waited for its search", took, r.opt.Recall.Timeout)
			}

			// The control: alone, a held search is waited for, up to
			// recall.timeout, and no cached ranking stands in.
			hold.Store(true)
			r.say(t, "rb", 6, "Ada", "Tell me of the brass compass once more.")
			<-held
			if m := modes.last(); m != bot.RecallFailed {
				t.Errorf("with no turn waiting the held recall went %q, want %q", m, bot.RecallFailed)
			}
			if block := blockFor(t, r.fake, "Tell me of the brass compass once more."); block != "" {
				t.Errorf("a search held past recall.timeout with no load still gave a block:\n%s", block)
			}
		})
	}
}

// A cached ranking holds ids, never text: loaded again it passes every
// check a search's load makes, so what /forget took since (here the chat
// the compass was told in) does not come back through it.
func TestRecallUnderLoadDoesNotBringBackWhatWasForgotten(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, hold, held, modes := heldRecallRig(t, b)
			compass := "I buried the brass compass under the old oak."
			r.say(t, "told", 1, "Ada", compass)
			r.say(t, "told", 3, "Ada", "*I look at the sea for a while.*")
			told := r.chat(t, "told")
			r.say(t, "asks", 4, "Ada", "Where did I bury the brass compass?")
			if block := blockFor(t, r.fake, "Where did I bury the brass compass?"); !strings.Contains(block, compass) {
				t.Fatalf("the question's block lacks the compass:\n%s", block)
			}
			forgetConfirmed(t, r.p, r.st, "told", told.ID)
			ask := "Is the brass compass still under the oak?"
			sayUnderLoad(t, r, hold, held, "asks", 5, ask)
			if n := modes.count(bot.RecallCached); n != 1 {
				t.Fatalf("%d turns recalled from a cached ranking, want 1 (modes %v)", n, modes.modes)
			}
			if block := blockFor(t, r.fake, ask); strings.Contains(block, "compass") {
				t.Errorf("the cached ranking brought back a perception of a forgotten chat:\n%s", block)
			}
		})
	}
}

// A panic in the search a turn runs beside its own work is recovered
// there: counted, and the turn answers without a new block; the next
// turn recalls as usual.
func TestRecallSearchPanicIsSurvived(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			modes := &recallModes{}
			var boom atomic.Bool
			r.opt.Observer = modes
			r.opt.Recall.KeptChars = 0
			r.opt.RecallDelay = func(context.Context) {
				if boom.CompareAndSwap(true, false) {
					panic("a bug in the search")
				}
			}
			r.p = bot.New(r.opt)
			compass := "I buried the brass compass under the old oak."
			r.say(t, "rp", 1, "Ada", compass)
			r.say(t, "rp", 3, "Ada", "*I look at the sea for a while.*")
			r.exec(t, "rp", "new")
			boom.Store(true)
			ask := "Where did I bury the brass compass?"
			r.say(t, "rp", 4, "Ada", ask)
			if block := blockFor(t, r.fake, ask); block != "" {
				t.Errorf("a search that panicked gave a block:\n%s", block)
			}
			modes.mu.Lock()
			panics := slices.Clone(modes.panics)
			modes.mu.Unlock()
			if !slices.Equal(panics, []string{"recall"}) {
				t.Errorf("panics counted %v, want [recall]", panics)
			}
			again := "Is the brass compass still under the oak?"
			r.say(t, "rp", 5, "Ada", again)
			if block := blockFor(t, r.fake, again); !strings.Contains(block, compass) {
				t.Errorf("the next turn recalled nothing:\n%s", block)
			}
		})
	}
}
