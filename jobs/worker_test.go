package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// rig is a store with one long chat, a scribe on the fake model server, the
// memory service, and a queue and worker on a Redis.
type rig struct {
	st     *models.Store
	fake   *openaitest.Server
	scribe *memorytest.Scribe
	mem    *memory.Service
	redis  *jobs.Redis
	queue  *jobs.Queue
	chatID string
}

type backend struct {
	name     string
	db       testenv.Backend
	redisURL string
}

func backends(t *testing.T) []backend {
	dbs := testenv.Backends(t)
	out := []backend{{name: "sqlite+embedded", db: dbs[0]}}
	if len(dbs) > 1 {
		out = append(out, backend{name: "postgres+redis", db: dbs[1], redisURL: testenv.FreshRedisURL(t)})
	}
	return out
}

func newRig(t *testing.T, b backend, beats int) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{st: testenv.OpenStore(t, b.db), fake: openaitest.NewServer(t), scribe: &memorytest.Scribe{}}
	r.fake.SetResponder(r.scribe.Respond)
	client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", Timeout: 2 * time.Second, MaxRetries: -1}, nil)
	mc := config.Default().Memory
	r.mem = memory.NewService(r.st, llm.Scribe{C: client}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
	var err error
	if r.redis, err = jobs.OpenRedis(ctx, b.redisURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.redis.Close() })
	r.queue = jobs.NewQueue(r.redis, nil)
	r.chatID = seedChat(t, r.st, beats)
	return r
}

// seedChat stores a chat with a greeting and beats of (user, reply).
func seedChat(t *testing.T, st *models.Store, beats int) string {
	return seedChatIn(t, st, "ada/maren", beats)
}

// seedChatIn is seedChat in the console channel ext.
func seedChatIn(t *testing.T, st *models.Store, ext string, beats int) string {
	t.Helper()
	ctx := context.Background()
	must(t, st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
	_, err := st.EnsureChannel(ctx, models.Channel{ID: "console:" + ext, Platform: "console", ExternalID: ext, SpaceID: "console:local:ada"})
	must(t, err)
	must(t, st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Language: "en", Data: "{}"}))
	chat, err := st.StartChat(ctx, "console:"+ext, "maren", "console:local:ada", "test", &models.Message{Role: "assistant", AuthorName: "Maren", Content: "The kettle rattles."})
	must(t, err)
	addBeats(t, st, chat.ID, beats)
	return chat.ID
}

// addBeats appends beats of (user, reply) at the chat's head.
func addBeats(t *testing.T, st *models.Store, chatID string, beats int) {
	t.Helper()
	ctx := context.Background()
	chat, err := st.Chat(ctx, chatID)
	must(t, err)
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("Line %d: I climb the stair and ask about the light, the storm and the boat.", i)}
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("Reply %d: *Maren trims the wick and answers slowly, watching the rain on the glass.*", i)}
		must(t, st.Append(ctx, chat.ID, head, head, []*models.Message{u, a}))
		head = a.ID
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) startWorker(t *testing.T) (stop func()) {
	return r.startWorkerIdle(t, 0)
}

func (r *rig) startWorkerIdle(t *testing.T, idle time.Duration) (stop func()) {
	return r.startWorkerOn(t, jobs.WorkerOptions{IdleRecap: idle})
}

// startWorkerOn starts a worker with opt, polling every 200ms and sweeping
// once, at its start.
func (r *rig) startWorkerOn(t *testing.T, opt jobs.WorkerOptions) (stop func()) {
	opt.PollInterval, opt.SweepInterval = 200*time.Millisecond, time.Hour
	_, stop = r.runWorker(t, opt)
	return stop
}

// runWorker starts a worker with opt as given and returns it, with what
// stops it.
func (r *rig) runWorker(t *testing.T, opt jobs.WorkerOptions) (*jobs.Worker, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, opt, nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return w, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
}

func (r *rig) waitSummaries(t *testing.T, n int) []models.Summary {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sums, err := r.st.ChatSummaries(context.Background(), r.chatID)
		must(t, err)
		if len(sums) >= n {
			return sums
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d summaries, want %d", len(sums), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCompactionJob(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 80)
			stop := r.startWorker(t)
			defer stop()
			// A duplicate enqueue is folded into the first.
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			// 80 uncovered beats: one compaction covers all but the last 6.
			sums := r.waitSummaries(t, 1)
			must(t, r.queue.Drain(context.Background(), 10*time.Second))
			if sums[0].Beats != 74 {
				t.Errorf("first summary covers %d beats, want 74", sums[0].Beats)
			}
			// 40 more beats owe the next one, which merges the first.
			addBeats(t, r.st, r.chatID, 40)
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			r.waitSummaries(t, 2)
			must(t, r.queue.Drain(context.Background(), 10*time.Second))
			sums, _ = r.st.ChatSummaries(context.Background(), r.chatID)
			if len(sums) != 2 {
				t.Fatalf("got %d summaries, want 2", len(sums))
			}
			if !strings.Contains(sums[1].Content, "Merged: Summary #1") || sums[1].Beats != 114 {
				t.Errorf("second summary (%d beats) did not merge the first:\n%s", sums[1].Beats, sums[1].Content)
			}
			rec, err := r.st.Job(context.Background(), memory.KindCompact, r.chatID)
			if err != nil || rec.Outcome != "skipped" {
				t.Errorf("last job record = %+v (%v), want skipped after the backlog", rec, err)
			}
		})
	}
}

func TestCompactionRejectedOutputStaysOwed(t *testing.T) {
	faults := map[string]openaitest.Answer{
		"garbage":         {Text: "I'd rather not summarize this."},
		"missing section": {Text: "## Story so far\nx\n\n## Characters\ny\n\n## Current scene\nz"},
		"empty scene":     {Text: "## Story so far\nx\n\n## Characters\ny\n\n## Promises and foreshadowing\n-\n\n## Facts ledger\n-\n\n## Current scene\n"},
		"server error":    {Fault: openaitest.Fault500},
		"timeout":         {Fault: openaitest.FaultHang},
	}
	for name, bad := range faults {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, backends(t)[0], 40)
			// Atomic: a hung request's handler reads it after the client gave up.
			var broken atomic.Bool
			broken.Store(true)
			r.scribe.Break = func(string, int) (openaitest.Answer, bool) { return bad, broken.Load() }
			ctx := context.Background()
			_, err := r.mem.Compact(ctx, r.chatID, false)
			if err == nil {
				t.Fatal("compaction with a broken scribe reported success")
			}
			var rej *memory.RejectedError
			validation := bad.Fault == openaitest.FaultNone
			if validation != errors.As(err, &rej) {
				t.Errorf("err = %v; rejected-output error: %v, want %v", err, errors.As(err, &rej), validation)
			}
			sums, _ := r.st.ChatSummaries(ctx, r.chatID)
			if len(sums) != 0 {
				t.Fatalf("a summary was installed from a broken answer")
			}
			rec, _ := r.st.Job(ctx, memory.KindCompact, r.chatID)
			if rec.Outcome != "failed" || rec.Reason == "" {
				t.Errorf("job record = %+v, want failed with a reason", rec)
			}
			chat, _ := r.st.Chat(ctx, r.chatID)
			if owed, _ := r.mem.CompactionOwed(ctx, chat); !owed {
				t.Errorf("compaction no longer owed after a failure")
			}
			broken.Store(false)
			res, err := r.mem.Compact(ctx, r.chatID, false)
			if err != nil || res.Outcome != memory.Written || res.Product == "" {
				t.Fatalf("next attempt: %+v, %v; want written", res, err)
			}
		})
	}
}

func TestSweeperFindsOwedWork(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 40)
			// No job was ever enqueued: the queue was lost. The sweeper at the
			// worker's start finds the owed compaction.
			stop := r.startWorker(t)
			defer stop()
			r.waitSummaries(t, 1)
		})
	}
}

func TestRecapIdleDebounceThenConsolidation(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 3)
			ctx := context.Background()
			// The test's clock stands behind the wall clock, on which Redis
			// runs the task (up to a second early) and the store stamps the
			// recap: a recap the worker lets run once the chat rested 2s by
			// the test's clock is also 2s after the message by the store's.
			clock := newTestClock(time.Now().Add(-2 * time.Second))
			r.queue.Now = clock.Now
			// The chat rests 2s after each message; a message 1s in pushes
			// the recap back.
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, 2*time.Second))
			clock.Advance(time.Second)
			second := clock.Now()
			must(t, r.st.DB().Model(&models.Chat{}).Where("id = ?", r.chatID).Update("active_at", second).Error)
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, 2*time.Second))
			insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
			if info, err := insp.GetQueueInfo(jobs.QueueDefault); err != nil || info.Size != 1 {
				t.Errorf("waiting recap tasks = %v (%v), want exactly one", info, err)
			}
			// The task comes due (2s on the wall clock) while the chat has
			// rested 1s: it waits again, until the chat has rested 2s.
			clock.Advance(time.Second)
			stop := r.startWorkerOn(t, jobs.WorkerOptions{IdleRecap: 2 * time.Second, Now: clock.Now})
			defer stop()
			waitRecapDeferred(t, insp, r.chatID)
			clock.Advance(time.Second)
			deadline := time.Now().Add(20 * time.Second)
			for {
				rec, err := r.st.Recap(ctx, r.chatID)
				mem, _ := r.st.LoadMemory(ctx, "maren", "console:local:ada")
				if err == nil && strings.Contains(mem.Resident, "[chat:"+r.chatID+"]") {
					if rec.UpdatedAt.Before(second.Add(2 * time.Second)) {
						t.Errorf("recap written %s after the last message, before the chat was idle for 2s", rec.UpdatedAt.Sub(second))
					}
					if len(mem.Entries) != 1 || mem.Entries[0].MergedHash != rec.Hash {
						t.Errorf("manifest = %+v, want the recap merged", mem.Entries)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no recap and consolidation: recap err %v, resident %q", err, mem.Resident)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Unchanged chat: a second recap is skipped and recorded.
			res, err := r.mem.Recap(ctx, r.chatID)
			if err != nil || res.Outcome != memory.Skipped || res.Reason != memory.ReasonUnchanged {
				t.Errorf("second recap = %+v, %v; want skipped, unchanged", res, err)
			}
			// The hard path: a hand edit clears the merged marks and the next
			// consolidation rebuilds around the edit.
			edited := "# Earlier chats\n- A note written by hand."
			must(t, r.st.EditMemory(ctx, "maren", "console:local:ada", nil, &edited, "test"))
			mem, _ := r.st.LoadMemory(ctx, "maren", "console:local:ada")
			if mem.Entries[0].MergedHash != "" {
				t.Fatalf("edit did not clear merged marks")
			}
			res, err = r.mem.Consolidate(ctx, "maren", "console:local:ada")
			if err != nil || res.Outcome != memory.Written {
				t.Fatalf("rebuild: %+v, %v", res, err)
			}
			mem, _ = r.st.LoadMemory(ctx, "maren", "console:local:ada")
			if !strings.Contains(mem.Resident, "- A note written by hand.") || !strings.Contains(mem.Resident, "[chat:"+r.chatID+"]") {
				t.Errorf("rebuilt resident lost the hand edit or the chat:\n%s", mem.Resident)
			}
			var hist int64
			r.st.DB().Model(&models.MemoryHistory{}).Count(&hist)
			if hist == 0 {
				t.Errorf("replaced versions were not kept in history")
			}
		})
	}
}

func TestRecapWhenIdleSkipsTheRoundTripWhileArmed(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 1)
			ctx := context.Background()
			clock := newTestClock(time.Now())
			r.queue.Now = clock.Now
			insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
			waiting := func() int {
				info, err := insp.GetQueueInfo(jobs.QueueDefault)
				if err != nil {
					return 0
				}
				return info.Size
			}
			const idle = 2 * time.Second
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, idle))
			if n := waiting(); n != 1 {
				t.Fatalf("waiting recap tasks = %d, want 1", n)
			}
			// Take the task away behind the queue's back: while the chat is
			// armed (less than idle/2 since), a turn does not look.
			must(t, insp.DeleteTask(jobs.QueueDefault, jobs.TypeRecap+":"+r.chatID))
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, idle))
			if n := waiting(); n != 0 {
				t.Errorf("armed chat enqueued again: %d waiting", n)
			}
			// After idle/2 it makes sure again.
			clock.Advance(idle/2 + 50*time.Millisecond)
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, idle))
			if n := waiting(); n != 1 {
				t.Errorf("after idle/2: %d waiting, want 1", n)
			}
			// RecapNow disarms: the next turn's call enqueues at once.
			must(t, r.queue.RecapNow(ctx, r.chatID))
			must(t, insp.DeleteTask(jobs.QueueUrgent, jobs.TypeRecap+":"+r.chatID))
			must(t, r.queue.RecapWhenIdle(ctx, r.chatID, idle))
			if n := waiting(); n != 1 {
				t.Errorf("after RecapNow: %d waiting, want 1", n)
			}
		})
	}
}

// Index terms a crash left owed, in a chat that never records again, are
// written by the sweeper; a mark whose perception is gone is dropped.
func TestSweeperWritesOwedIndexTerms(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, b, 1)
			must(t, r.st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: r.chatID, N: 5, Seed: 7}))
			var ids []string
			must(t, r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", r.chatID).Pluck("id", &ids).Error)
			if len(ids) != 5 {
				t.Fatalf("%d perceptions seeded, want 5", len(ids))
			}
			// The install stood; its terms were never written.
			must(t, r.st.DB().Where("item_id IN ?", ids).Delete(&models.RecallTerm{}).Error)
			for _, id := range append(ids, models.NewID()) {
				must(t, r.st.DB().Create(&models.RecallOwed{ItemID: id, ChatID: r.chatID}).Error)
			}
			w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, jobs.WorkerOptions{SweepInterval: time.Hour}, nil)
			if _, err := w.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				var n int64
				must(t, r.st.DB().Model(&models.RecallTerm{}).Where("item_id = ?", id).Count(&n).Error)
				if n == 0 {
					t.Errorf("perception %s has no index terms after the sweep", id)
				}
			}
			var owed int64
			must(t, r.st.DB().Model(&models.RecallOwed{}).Count(&owed).Error)
			if owed != 0 {
				t.Errorf("%d owed marks left after the sweep, want none", owed)
			}
		})
	}
}

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

// newTestClock is a clock standing at now.
func newTestClock(now time.Time) *testClock { return &testClock{now: now} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// waitRecapDeferred waits until the chat's recap task ran and was set to
// run again because the chat was not idle yet.
func waitRecapDeferred(t *testing.T, insp *asynq.Inspector, chatID string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := insp.GetTaskInfo(jobs.QueueDefault, jobs.TypeRecap+":"+chatID)
		if err == nil && strings.Contains(info.LastErr, "still active") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recap task never deferred for a chat still active: %+v, %v", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
