package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// An enqueue that meets its key's task running (which may have read its
// input before the change that asks again) queues one follow-up behind it:
// however often it is asked meanwhile, the work runs once more, after the
// first run and never beside it (the key's lock), and nothing is left
// queued after. A sweep's ask, which brings nothing new, queues none.
func TestAnEnqueueWhileTheTaskRunsQueuesOneFollowUp(t *testing.T) {
	eachRedis(t, func(t *testing.T, r *Redis) {
		ctx := context.Background()
		q := NewQueue(r, nil)
		w := NewWorker(r, q, nil, nil, WorkerOptions{PollInterval: 100 * time.Millisecond, Concurrency: 4}, nil)
		const typ, key = typePrefix + "slow", "chat-1"
		var runs, inside atomic.Int32
		var overlapped atomic.Bool
		started := make(chan int32, 8)
		release := make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		w.mux.HandleFunc(typ, func(context.Context, *asynq.Task) error {
			if inside.Add(1) > 1 {
				overlapped.Store(true)
			}
			defer inside.Add(-1)
			n := runs.Add(1)
			started <- n
			if n == 1 {
				<-release
			}
			return nil
		})
		if err := w.srv.Start(w.mux); err != nil {
			t.Fatal(err)
		}
		defer w.srv.Shutdown()
		defer free() // a failed test lets the first run end before the shutdown

		ask := func() {
			t.Helper()
			if err := q.enqueue(ctx, typ, key, QueueDefault, false, ChatPayload{ChatID: key}); err != nil {
				t.Fatal(err)
			}
		}
		ask()
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the first task never ran")
		}
		// A sweep's ask brings nothing new: no follow-up.
		if err := q.enqueue(sweeping(ctx), typ, key, QueueDefault, false, ChatPayload{ChatID: key}); err != nil {
			t.Fatal(err)
		}
		if queued(q, taskID(typ, key)+nextSuffix) {
			t.Fatal("a sweep queued a follow-up")
		}
		for range 3 {
			ask()
		}
		next, err := q.insp.GetTaskInfo(QueueDefault, taskID(typ, key)+nextSuffix)
		if err != nil {
			t.Fatalf("no follow-up queued while the task runs: %v", err)
		}
		if next.State == asynq.TaskStateCompleted || next.State == asynq.TaskStateArchived {
			t.Fatalf("the follow-up is %s before the first run ended", next.State)
		}
		free()

		deadline := time.Now().Add(20 * time.Second)
		for queued(q, taskID(typ, key)) || queued(q, taskID(typ, key)+nextSuffix) {
			if time.Now().After(deadline) {
				t.Fatalf("tasks still queued after %d runs", runs.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n := runs.Load(); n != 2 {
			t.Errorf("%d runs, want the first and one follow-up", n)
		}
		if overlapped.Load() {
			t.Error("the follow-up ran beside the first run")
		}
	})
}

// queued reports whether a task of id is in the default queue.
func queued(q *Queue, id string) bool {
	_, err := q.insp.GetTaskInfo(QueueDefault, id)
	return !errors.Is(err, asynq.ErrTaskNotFound)
}
