package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
)

// Issue 34, "failures cost little", on a scaled clock: a scribe that always
// fails consolidation, a sweep interval of 2 s standing for 5 minutes and a
// first retry of 100 ms for 20 s, over five processes one after another
// (each with its own embedded Redis, or all on one redis-server), each
// writing a new recap of its own. Once the backoff has grown to the sweep
// interval, the key costs at most two model calls (a try and its repair)
// per sweep interval, whatever restarts and recaps ask; and each process
// ends (drain, then worker stop) without waiting on work that is only
// failing: the drain in half its deadline, the worker in under 5 s.
func TestFailingConsolidationCostsTwoCallsPerSweepInterval(t *testing.T) {
	const (
		sweep    = 2 * time.Second
		first    = 100 * time.Millisecond
		sessions = 5
		session  = 3 * time.Second
	)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 3)
			ctx := context.Background()
			var mu sync.Mutex
			var calls []time.Time
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				if memorytest.Kind(req) == "consolidate" {
					mu.Lock()
					calls = append(calls, time.Now())
					mu.Unlock()
					return openaitest.Answer{Text: "No."}
				}
				return r.scribe.Respond(req)
			})
			if res, err := r.mem.Recap(ctx, r.chatID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap: %+v, %v", res, err)
			}
			start := time.Now()
			for i := 0; i < sessions; i++ {
				red := r.redis
				if b.redisURL == "" {
					// A new process: a new embedded Redis, nothing queued.
					var err error
					red, err = jobs.OpenRedis(ctx, "")
					must(t, err)
				}
				q := jobs.NewQueue(red, nil)
				wctx, cancel := context.WithCancel(ctx)
				w := jobs.NewWorker(red, q, r.mem, r.st, jobs.WorkerOptions{SweepInterval: sweep, FirstRetry: first,
					PollInterval: 100 * time.Millisecond, IdleRecap: time.Hour}, nil)
				done := make(chan error, 1)
				go func() { done <- w.Run(wctx) }()
				// Each process ends a chat of its own: its recap makes the
				// consolidation owed again.
				chat := seedNamedChat(t, r.st, 10+i, 2)
				must(t, q.RecapNow(ctx, chat))
				time.Sleep(session)
				// The drain waits for the work in flight (this session's
				// recap and consolidation tries) but never for the failing
				// key's retries: were it to, their next tries would keep it
				// busy almost to its deadline (9.1–9.5 s of a 10 s one, when
				// Queue.inFlight counted them). Quiet, drain and stop take
				// about 0.15 s; under -race beside other packages' tests the
				// drain has taken 5.2 s, with a try and its repair in flight.
				// So the deadline is 20 s and the drain must end in half.
				stopAt := time.Now()
				if err := q.Drain(ctx, 20*time.Second); err != nil {
					t.Errorf("session %d: drain: %v", i, err)
				}
				drained := time.Since(stopAt)
				cancel()
				must(t, <-done)
				stopped := time.Since(stopAt) - drained
				t.Logf("session %d: drained in %s, stopped in %s", i, drained, stopped)
				if drained > 10*time.Second {
					t.Errorf("session %d: the drain took %s, want under 10s: it waited on the failing key's retries", i, drained)
				}
				if stopped > 5*time.Second {
					t.Errorf("session %d: the worker took %s to stop after the drain, want under 5s", i, stopped)
				}
				if b.redisURL == "" {
					red.Close()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			// The first five tries (a call and its repair each) wait 100 ms
			// … 1.6 s after their failures; from the sixth on the backoff is
			// the sweep interval.
			sort.Slice(calls, func(i, j int) bool { return calls[i].Before(calls[j]) })
			var late []time.Time
			if len(calls) > 10 {
				late = calls[10:]
			}
			for i := range late {
				n := 0
				for _, c := range late[i:] {
					if c.Sub(late[i]) < sweep*9/10 {
						n++
					}
				}
				if n > 2 {
					t.Errorf("%d consolidation calls within one sweep interval from %s on; want at most 2 (calls at %v)", n, late[i].Sub(start).Round(time.Millisecond), offsets(start, late))
					break
				}
			}
			// Not vacuous: the key kept being tried, once per interval.
			if len(late) < 4 {
				t.Errorf("only %d consolidation calls after the first five tries (all: %v); want the key tried each interval", len(late), offsets(start, calls))
			}
			rec, err := r.st.Job(ctx, memory.KindConsolidate, "maren|"+space)
			must(t, err)
			if rec.Outcome != string(memory.Failed) || rec.RetryAt == nil {
				t.Errorf("job record %+v: want the failure shown with its next try", rec)
			}
		})
	}
}

func offsets(start time.Time, ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, c := range ts {
		out[i] = c.Sub(start).Round(10 * time.Millisecond).String()
	}
	return out
}

// Issue 34, "due work runs when it is due": 25 beats of a chat, then
// silence. The recorder run that makes reflection due is the one the idle
// recap runs first (no later turn comes to enqueue anything); it enqueues
// the reflection, which runs within 10 s, not at the next sweep (an hour).
func TestIdleChatsRecorderRunEnqueuesItsReflection(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 0)
			ctx := context.Background()
			r.fake.SetResponder(memorytest.Reflecting(r.scribe))
			client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
			cfg := memory.ConfigFrom(config.Default().Memory, "en")
			cfg.Reflect = memory.ReflectConfigFrom(config.Default().Reflection)
			r.mem = memory.NewService(r.st, llm.Scribe{C: client}, cfg, slog.New(slog.DiscardHandler))
			addRecordedBeats(t, r.st, r.chatID, 25)
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, jobs.WorkerOptions{SweepInterval: time.Hour, PollInterval: 200 * time.Millisecond,
				IdleRecap: time.Second, Recorder: true, RecordBatch: 0, Reflect: true}, nil)
			done := make(chan error, 1)
			go func() { done <- w.Run(wctx) }()
			defer func() { cancel(); <-done }()
			// The chat's last turn armed its idle recap.
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, time.Second))
			var recorded time.Time
			deadline := time.Now().Add(30 * time.Second)
			for recorded.IsZero() {
				if rec, err := r.st.Job(ctx, memory.KindRecord, r.chatID); err == nil && rec.Outcome == string(memory.Written) {
					recorded = time.Now()
				}
				if time.Now().After(deadline) {
					t.Fatal("the idle recap never ran the recorder")
				}
				time.Sleep(50 * time.Millisecond)
			}
			for {
				rec, err := r.st.Job(ctx, memory.KindReflect, r.chatID)
				if err == nil && rec.Outcome == string(memory.Written) {
					break
				}
				if time.Since(recorded) > 10*time.Second {
					t.Fatalf("no reflection within 10 s of the recorder run that made it due; last reflection record %+v (%v)", rec, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// addRecordedBeats appends beats of (user, reply) with their events, as
// turns store them.
func addRecordedBeats(t *testing.T, st *models.Store, chatID string, beats int) {
	t.Helper()
	ctx := context.Background()
	chat, err := st.Chat(ctx, chatID)
	must(t, err)
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf(`"Beat %d: where is the key?"`, i)}
		rec := &models.TurnRecord{SpaceID: chat.SpaceID, NewTurn: true, Present: []string{"Maren", "Ada"}, Actors: []string{"Ada"},
			Events: [][]models.PlainEvent{{{Kind: "line", Text: u.Content}}}}
		must(t, st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{u}, rec))
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("*She trims the wick for the %d time.*", i)}
		rec = &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren"}, Actors: []string{"Maren"},
			Events: [][]models.PlainEvent{{{Kind: "action", Text: a.Content}}}}
		must(t, st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{a}, rec))
		head = a.ID
	}
}
