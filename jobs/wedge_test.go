package jobs_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/memory"
	"troupe/models"
)

// The cases of issue 11 defect 1: one rejected or exhausted job must not
// stop its key for good. Each runs on the embedded Redis (miniredis) and on
// redis-server with PostgreSQL.

const space = "console:local:ada"

func (r *rig) startWorkerEvery(t *testing.T, sweep time.Duration) (stop func()) {
	return r.startWorkerWith(t, jobs.WorkerOptions{SweepInterval: sweep})
}

func (r *rig) startWorkerWith(t *testing.T, opt jobs.WorkerOptions) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	opt.PollInterval, opt.IdleRecap = 200*time.Millisecond, time.Hour
	w := jobs.NewWorker(r.redis, r.queue, r.mem, r.st, opt, nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
}

// breakConsolidation makes the scribe answer every consolidation with a
// resident summary far over its 1200 characters while broken is set.
func (r *rig) breakConsolidation(broken *atomic.Bool) {
	long := "- " + strings.Repeat("Maren keeps the lamp lit through the long storm. ", 40) + "[chat:" + r.chatID + "]"
	r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		if broken.Load() && memorytest.Kind(req) == "consolidate" {
			return openaitest.Answer{Text: memorytest.Consolidate(req) + "\n" + long}
		}
		return r.scribe.Respond(req)
	})
}

// waitFailed waits until the job of kind and key is recorded as failed and
// its task is no longer waiting or running, and returns the record.
func (r *rig) waitFailed(t *testing.T, kind, key, queue string) models.JobRecord {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
	id := "memory:" + kind + ":" + key
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec, err := r.st.Job(context.Background(), kind, key)
		info, ierr := insp.GetTaskInfo(queue, id)
		settled := errors.Is(ierr, asynq.ErrTaskNotFound) || (ierr == nil && info.State != asynq.TaskStateActive && info.State != asynq.TaskStatePending)
		if err == nil && rec.Outcome == string(memory.Failed) && settled {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s %s: record %+v (%v), task %v (%v); want a recorded failure", kind, key, rec, err, info, ierr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkNoDeadTasks fails when a queue holds an archived task, or when any
// value in Redis still carries the recorded failure's reason (which can
// quote story text that /forget must be able to remove).
func (r *rig) checkNoDeadTasks(t *testing.T, reason string) {
	t.Helper()
	ctx := context.Background()
	insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
	for _, q := range []string{jobs.QueueDefault, jobs.QueueUrgent} {
		if tasks, err := insp.ListArchivedTasks(q); err == nil && len(tasks) > 0 {
			t.Errorf("queue %s holds %d archived tasks, the first %s with error %q", q, len(tasks), tasks[0].ID, tasks[0].LastErr)
		}
	}
	if len(reason) < 20 {
		t.Fatalf("recorded reason %q is too short to look for", reason)
	}
	keys, err := r.redis.Client.Keys(ctx, "*").Result()
	must(t, err)
	for _, k := range keys {
		var values []string
		switch typ, _ := r.redis.Client.Type(ctx, k).Result(); typ {
		case "string":
			v, _ := r.redis.Client.Get(ctx, k).Result()
			values = append(values, v)
		case "hash":
			m, _ := r.redis.Client.HGetAll(ctx, k).Result()
			for _, v := range m {
				values = append(values, v)
			}
		case "list":
			values, _ = r.redis.Client.LRange(ctx, k, 0, -1).Result()
		case "zset":
			values, _ = r.redis.Client.ZRange(ctx, k, 0, -1).Result()
		case "set":
			values, _ = r.redis.Client.SMembers(ctx, k).Result()
		}
		for _, v := range values {
			if strings.Contains(v, reason) {
				t.Errorf("redis key %s keeps the rejection reason %q", k, reason)
			}
		}
	}
}

// mergedAll reports whether every recap of the space is merged, and the
// memory state.
func (r *rig) waitMerged(t *testing.T, want func(models.MemoryState) bool, what string) models.MemoryState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mem, err := r.st.LoadMemory(context.Background(), "maren", space)
		if err == nil && want(mem) {
			return mem
		}
		if time.Now().After(deadline) {
			rec, _ := r.st.Job(context.Background(), memory.KindConsolidate, "maren|"+space)
			t.Fatalf("%s never happened: memory %+v, last job %+v", what, mem.Entries, rec)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func allMerged(n int) func(models.MemoryState) bool {
	return func(m models.MemoryState) bool {
		if len(m.Entries) != n {
			return false
		}
		for _, e := range m.Entries {
			if e.RecapHash == "" || e.MergedHash != e.RecapHash {
				return false
			}
		}
		return true
	}
}

// A resident summary over its limit is rejected; a new recap and a working
// scribe then consolidate the space at once, not after 90 days.
func TestRejectedConsolidationDoesNotWedgeItsSpace(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 3)
			ctx := context.Background()
			var broken atomic.Bool
			broken.Store(true)
			r.breakConsolidation(&broken)
			if res, err := r.mem.Recap(ctx, r.chatID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap: %+v, %v", res, err)
			}
			// The sweep at start finds the owed consolidation; it is rejected.
			stop := r.startWorkerEvery(t, time.Hour)
			defer stop()
			rec := r.waitFailed(t, memory.KindConsolidate, "maren|"+space, jobs.QueueDefault)
			r.checkNoDeadTasks(t, rec.Reason)
			// The task waits out the first backoff (20s), and the job record
			// says when it comes.
			info, err := asynq.NewInspectorFromRedisClient(r.redis.Client).GetTaskInfo(jobs.QueueDefault, jobs.TypeConsolidate+":maren|"+space)
			if err != nil || info.State != asynq.TaskStateRetry {
				t.Fatalf("task after a rejection: %+v, %v; want waiting to retry", info, err)
			}
			rec, err = r.st.Job(ctx, memory.KindConsolidate, "maren|"+space)
			must(t, err)
			if rec.Failures != 1 || rec.RetryAt == nil || rec.RetryAt.Sub(info.NextProcessAt).Abs() > 2*time.Second || time.Until(*rec.RetryAt) > 20*time.Second {
				t.Errorf("job record %+v, task next at %s; want 1 failure and the next try within 20s", rec, info.NextProcessAt)
			}
			// /memory and `troupe memory show` read the failure from the report.
			report, err := r.mem.Report(ctx, "maren", space)
			must(t, err)
			if len(report.Failures) != 1 || report.Failures[0].Kind != memory.KindConsolidate || report.Failures[0].Attempts != 1 ||
				report.Failures[0].Reason != rec.Reason || rec.RetryAt == nil || !report.Failures[0].NextTry.Equal(*rec.RetryAt) {
				t.Errorf("report failures = %+v, want the consolidation's with its next try", report.Failures)
			}

			broken.Store(false)
			second := seedNamedChat(t, r.st, 2, 3)
			if res, err := r.mem.Recap(ctx, second); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap of the second chat: %+v, %v", res, err)
			}
			// What the recap job does after writing a recap.
			must(t, r.queue.Consolidate(ctx, "maren", space))
			r.waitMerged(t, allMerged(2), "consolidating both chats after a rejection")
			if report, _ := r.mem.Report(ctx, "maren", space); len(report.Failures) != 0 {
				t.Errorf("after the consolidation succeeded, the report still lists %+v", report.Failures)
			}
		})
	}
}

// A rejected summary, then more turns and a restart: the chat compacts.
func TestRejectedSummaryThenMoreTurnsCompacts(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 40)
			ctx := context.Background()
			var broken atomic.Bool
			broken.Store(true)
			r.scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) {
				return openaitest.Answer{Text: "I'd rather not summarize this."}, kind == "summary" && broken.Load()
			}
			stop := r.startWorkerEvery(t, time.Second)
			must(t, r.queue.Compact(ctx, r.chatID, false))
			rec := r.waitFailed(t, memory.KindCompact, r.chatID, jobs.QueueDefault)
			r.checkNoDeadTasks(t, rec.Reason)
			stop()
			if report, _ := r.mem.Report(ctx, "maren", space); len(report.Failures) != 1 || report.Failures[0].Key != r.chatID {
				t.Errorf("report failures = %+v, want the chat's compaction", report.Failures)
			}

			broken.Store(false)
			addBeats(t, r.st, r.chatID, 40)
			// What a turn does when the compaction trigger holds.
			must(t, r.queue.Compact(ctx, r.chatID, false))
			stop = r.startWorkerEvery(t, time.Second)
			defer stop()
			r.waitSummaries(t, 1)
		})
	}
}

// A rejected consolidation, then /forget of a chat: the forget's
// consolidation runs at once and removes the chat from memory.
func TestForgottenChatsConsolidationCompletes(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 3)
			ctx := context.Background()
			second := seedNamedChat(t, r.st, 2, 3)
			for _, id := range []string{r.chatID, second} {
				if res, err := r.mem.Recap(ctx, id); err != nil || res.Outcome != memory.Written {
					t.Fatalf("recap %s: %+v, %v", id, res, err)
				}
			}
			var broken atomic.Bool
			broken.Store(true)
			r.breakConsolidation(&broken)
			stop := r.startWorkerEvery(t, time.Hour)
			defer stop()
			rec := r.waitFailed(t, memory.KindConsolidate, "maren|"+space, jobs.QueueDefault)
			r.checkNoDeadTasks(t, rec.Reason)

			broken.Store(false)
			f, err := r.mem.ForgetChat(ctx, second)
			must(t, err)
			// What /forget does after deleting the chat.
			must(t, r.queue.Consolidate(ctx, f.CardID, f.SpaceID))
			mem := r.waitMerged(t, allMerged(1), "consolidating after /forget")
			if strings.Contains(mem.Handbook, second) || strings.Contains(mem.Resident, second) {
				t.Errorf("the forgotten chat %s is still in memory:\n%s\n%s", second, mem.Handbook, mem.Resident)
			}
		})
	}
}

// An archived task (asynq archives what exhausts its retries, or a task
// whose lease expired in a crash) is replaced by the next enqueue.
func TestArchivedTaskIsReplaced(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 40)
			ctx := context.Background()
			insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
			id := jobs.TypeCompact + ":" + r.chatID
			must(t, r.queue.Compact(ctx, r.chatID, false))
			must(t, insp.ArchiveTask(jobs.QueueDefault, id))
			must(t, r.queue.Compact(ctx, r.chatID, false))
			info, err := insp.GetTaskInfo(jobs.QueueDefault, id)
			if err != nil || info.State != asynq.TaskStatePending {
				t.Fatalf("task after enqueue over an archived one: %+v, %v; want pending", info, err)
			}
			stop := r.startWorkerEvery(t, time.Hour)
			defer stop()
			r.waitSummaries(t, 1)
		})
	}
}

// A hand edit (`troupe memory edit`) runs a consolidation that waits out
// the backoff of its failures at once.
func TestHandEditRunsAFailingConsolidation(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 3)
			ctx := context.Background()
			if res, err := r.mem.Recap(ctx, r.chatID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap: %+v, %v", res, err)
			}
			var broken atomic.Bool
			broken.Store(true)
			r.breakConsolidation(&broken)
			stop := r.startWorkerEvery(t, time.Hour)
			defer stop()
			r.waitFailed(t, memory.KindConsolidate, "maren|"+space, jobs.QueueDefault)

			broken.Store(false)
			edited := "# Earlier chats\n- The lamp was mended by hand."
			must(t, r.st.EditMemory(ctx, "maren", space, nil, &edited, "test"))
			must(t, r.queue.Consolidate(ctx, "maren", space))
			mem := r.waitMerged(t, allMerged(1), "consolidating after a hand edit")
			if !strings.Contains(mem.Resident, "- The lamp was mended by hand.") {
				t.Errorf("the rebuilt resident lost the hand edit:\n%s", mem.Resident)
			}
		})
	}
}

// A job that fails through all its task's retries ends without an archived
// task; the work stays owed, the record says the next sweep comes within
// the sweep interval, and a trigger runs it at that next try, not before.
func TestExhaustedJobEndsWithoutArchiving(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 40)
			ctx := context.Background()
			var broken atomic.Bool
			broken.Store(true)
			r.scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) {
				return openaitest.Answer{Text: "No."}, kind == "summary" && broken.Load()
			}
			// Retries 10ms, 20ms, … : the task's 8 retries pass in seconds.
			// Queued before the worker starts, so its sweep meets the task
			// and the test counts one task's retries.
			must(t, r.queue.Compact(ctx, r.chatID, false))
			stop := r.startWorkerWith(t, jobs.WorkerOptions{SweepInterval: time.Hour, FirstRetry: 10 * time.Millisecond})
			defer stop()
			insp := asynq.NewInspectorFromRedisClient(r.redis.Client)
			id := jobs.TypeCompact + ":" + r.chatID
			deadline := time.Now().Add(30 * time.Second)
			var rec models.JobRecord
			for {
				rec, _ = r.st.Job(ctx, memory.KindCompact, r.chatID)
				_, err := insp.GetTaskInfo(jobs.QueueDefault, id)
				if rec.Failures >= 9 && errors.Is(err, asynq.ErrTaskNotFound) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 30s: record %+v, task %v; want 9 failures and the task ended", rec, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			r.checkNoDeadTasks(t, rec.Reason)
			if rec.Failures != 9 || rec.RetryAt == nil || time.Until(*rec.RetryAt) < 50*time.Minute {
				t.Errorf("record %+v: want 9 failures and the next try at the next sweep, an hour on", rec)
			}
			broken.Store(false)
			// A trigger before the next try waits for it: a failing key
			// costs one try per backoff step however often it is asked.
			asked := r.scribe.Summaries()
			must(t, r.queue.Compact(ctx, r.chatID, false))
			time.Sleep(time.Second)
			if n := r.scribe.Summaries() - asked; n != 0 {
				t.Fatalf("the scribe was asked for %d summaries before the key's next try", n)
			}
			// Its next try comes (the hour passes): the trigger runs it.
			must(t, r.st.SetJobRetry(ctx, memory.KindCompact, r.chatID, time.Now()))
			must(t, r.queue.Compact(ctx, r.chatID, false))
			r.waitSummaries(t, 1)
		})
	}
}
