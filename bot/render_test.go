package bot_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"troupe/bot"
)

// call is one write the renderer made.
type call struct {
	op    string // post, edit, delete
	id    int
	piece string
	final bool
	at    time.Time
}

// recorder is a platform that keeps its messages in memory and records
// every write; fail, when set, fails the writes it returns an error for.
type recorder struct {
	mu    sync.Mutex
	now   func() time.Time
	calls []call
	shown map[int]string
	next  int
	fail  func(c call) error
}

func newRecorder(now func() time.Time) *recorder {
	return &recorder{now: now, shown: map[int]string{}}
}

func (r *recorder) write(c call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.at = r.now()
	if r.fail != nil {
		if err := r.fail(c); err != nil {
			return err
		}
	}
	r.calls = append(r.calls, c)
	switch c.op {
	case "post", "edit":
		r.shown[c.id] = c.piece
	case "delete":
		delete(r.shown, c.id)
	}
	return nil
}

func (r *recorder) Post(_ context.Context, _ int, piece string, final bool) (int, error) {
	r.mu.Lock()
	r.next++
	id := r.next
	r.mu.Unlock()
	return id, r.write(call{op: "post", id: id, piece: piece, final: final})
}

func (r *recorder) Edit(_ context.Context, id, _ int, piece string, final bool) error {
	return r.write(call{op: "edit", id: id, piece: piece, final: final})
}

func (r *recorder) Delete(_ context.Context, id int) error {
	return r.write(call{op: "delete", id: id})
}

// of returns the recorded calls of op.
func (r *recorder) of(op string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

// visible returns the texts of the messages still there, in posting order.
func (r *recorder) visible() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id := 1; id <= r.next; id++ {
		if t, ok := r.shown[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

// clock is a test clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A long reply, Chinese or English, arrives as messages within the limit,
// in order, holding the whole text.
func TestRendererSplitsLongReply(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"cjk":     strings.Repeat("灯笼在风里轻轻摇晃，茶馆的老板把最后一壶茶端上了桌。", 20),
		"english": strings.Repeat("The lantern sways in the wind, and the keeper pours the last pot of tea. ", 20),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const limit = 100
			rec := newRecorder(time.Now)
			r := bot.NewRenderer[int](rec, bot.RenderOptions{MaxLen: limit, EditInterval: time.Millisecond})
			if err := r.Finish(context.Background(), text); err != nil {
				t.Fatal(err)
			}
			got := rec.visible()
			if len(got) < 5 {
				t.Fatalf("a reply of %d characters came as %d messages, want it split at %d", utf8.RuneCountInString(text), len(got), limit)
			}
			if posts := rec.of("post"); len(posts) != len(got) || len(rec.of("edit")) != 0 {
				t.Errorf("writes: %d posts and %d edits, want one post per message", len(posts), len(rec.of("edit")))
			}
			for i, p := range got {
				if n := utf8.RuneCountInString(p); n > limit {
					t.Errorf("message %d has %d characters, over %d", i, n, limit)
				}
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if squash(strings.Join(got, "")) != squash(text) {
				t.Errorf("the messages do not hold the reply in order:\n%q", got)
			}
			if ids := r.Messages(); len(ids) != len(got) || ids[len(ids)-1] != rec.next {
				t.Errorf("renderer's messages: %v, want the %d posted, last %d", ids, len(got), rec.next)
			}
		})
	}
}

// While streaming, the reply is written at once, then at most once per
// edit interval; Finish catches up, keeping the pace of each message.
func TestRendererPacesEdits(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rec := newRecorder(clk.now)
	const interval = time.Second
	r := bot.NewRenderer[int](rec, bot.RenderOptions{MaxLen: 1000, EditInterval: interval, Now: clk.now})
	ctx := context.Background()

	if wait := r.Show(ctx, "The tide"); wait != 0 || len(rec.of("post")) != 1 {
		t.Fatalf("first text: wait %v, %d posts; want it posted at once", wait, len(rec.of("post")))
	}
	clk.add(300 * time.Millisecond)
	if wait := r.Show(ctx, "The tide turns"); wait != 700*time.Millisecond {
		t.Errorf("text 300ms after the post: wait %v, want 700ms", wait)
	}
	if n := len(rec.of("edit")); n != 0 {
		t.Errorf("edits within the interval: %d, want 0", n)
	}
	clk.add(700 * time.Millisecond)
	if wait := r.Show(ctx, "The tide turns slowly"); wait != 0 {
		t.Errorf("text after the interval: wait %v, want 0", wait)
	}
	edits := rec.of("edit")
	if len(edits) != 1 || edits[0].piece != "The tide turns slowly" || edits[0].final {
		t.Fatalf("edits after the interval: %+v, want one streaming edit to the latest text", edits)
	}
	if wait := r.Show(ctx, "The tide turns slowly."); wait != interval {
		t.Errorf("text right after an edit: wait %v, want %v", wait, interval)
	}

	// The clock stands still: Finish waits the interval out for real.
	start := time.Now()
	if err := r.Finish(ctx, "The tide turns slowly. Done."); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 950*time.Millisecond {
		t.Errorf("final edit came %v after the last edit, want it to wait the interval", took)
	}
	edits = rec.of("edit")
	if len(edits) != 2 || !edits[1].final || edits[1].piece != "The tide turns slowly. Done." {
		t.Errorf("edits: %+v, want a final edit to the final text", edits)
	}
	if got := rec.visible(); len(got) != 1 || got[0] != "The tide turns slowly. Done." {
		t.Errorf("shown: %q, want the final text alone", got)
	}
}

// Messages a longer streamed text needed are deleted when the final text
// is shorter; a broken-off reply is taken back whole.
func TestRendererDeletesLeftovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := strings.Repeat("Rain taps on the tea-house roof all night long. ", 12)

	t.Run("shorter final text", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(time.Now)
		r := bot.NewRenderer[int](rec, bot.RenderOptions{MaxLen: 100, EditInterval: 10 * time.Millisecond})
		r.Show(ctx, long)
		posted := len(rec.of("post"))
		if posted < 3 {
			t.Fatalf("streamed %d messages, want at least 3", posted)
		}
		if err := r.Finish(ctx, "Rain. Then quiet."); err != nil {
			t.Fatal(err)
		}
		if got := rec.visible(); len(got) != 1 || got[0] != "Rain. Then quiet." {
			t.Errorf("shown: %q, want the short final text alone", got)
		}
		deletes := rec.of("delete")
		if len(deletes) != posted-1 {
			t.Errorf("deleted %d messages, want the %d leftovers", len(deletes), posted-1)
		}
		for _, d := range deletes {
			if d.id == 1 {
				t.Errorf("deleted the first message, which the final text keeps")
			}
		}
		if ids := r.Messages(); len(ids) != 1 || ids[0] != 1 {
			t.Errorf("renderer's messages: %v, want [1]", ids)
		}
	})

	t.Run("refused edit posted anew", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(time.Now)
		r := bot.NewRenderer[int](rec, bot.RenderOptions{MaxLen: 100, EditInterval: 10 * time.Millisecond})
		r.Show(ctx, "First words")
		rec.fail = func(c call) error {
			if c.op == "edit" {
				return errors.New("message gone")
			}
			return nil
		}
		if err := r.Finish(ctx, "First words, and the rest."); err != nil {
			t.Fatal(err)
		}
		if got := rec.visible(); got[len(got)-1] != "First words, and the rest." {
			t.Errorf("shown: %q, want the final text posted anew", got)
		}
		if ids := r.Messages(); len(ids) != 1 || ids[0] != 2 {
			t.Errorf("renderer's messages: %v, want the new one [2]", ids)
		}
	})

	t.Run("taken back", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(time.Now)
		r := bot.NewRenderer[int](rec, bot.RenderOptions{MaxLen: 100, EditInterval: 10 * time.Millisecond})
		r.Show(ctx, long)
		if err := r.TakeBack(ctx); err != nil {
			t.Fatal(err)
		}
		if got := rec.visible(); len(got) != 0 {
			t.Errorf("left after take-back: %q", got)
		}
		if n := len(r.Messages()); n != 0 {
			t.Errorf("renderer still holds %d messages", n)
		}
	})
}

// Flood control holds every write until it lets go.
func TestRendererHoldsForFloodControl(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rec := newRecorder(clk.now)
	flood := errors.New("too many requests")
	r := bot.NewRenderer[int](rec, bot.RenderOptions{
		MaxLen: 1000, EditInterval: time.Second, Now: clk.now,
		HoldFor: func(err error) (time.Duration, bool) { return 5 * time.Second, errors.Is(err, flood) },
	})
	rec.fail = func(c call) error {
		if c.op == "post" {
			return fmt.Errorf("post: %w", flood)
		}
		return nil
	}
	ctx := context.Background()
	r.Show(ctx, "One")
	rec.fail = nil
	clk.add(2 * time.Second)
	if wait := r.Show(ctx, "One two"); wait != 3*time.Second || len(rec.of("post")) != 0 {
		t.Errorf("under flood control: wait %v, %d posts; want 3s and none", wait, len(rec.of("post")))
	}
	clk.add(3 * time.Second)
	if wait := r.Show(ctx, "One two"); wait != 0 || len(rec.of("post")) != 1 {
		t.Errorf("after flood control: wait %v, %d posts; want it posted", wait, len(rec.of("post")))
	}
}
