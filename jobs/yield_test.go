package jobs

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// While the process's turns are active, memory jobs start one at a time,
// an urgent task starts at once all the same, and once no turn is active
// the held jobs start together.
func TestJobsGiveWayToActiveTurns(t *testing.T) {
	eachRedis(t, func(t *testing.T, r *Redis) {
		ctx := context.Background()
		q := NewQueue(r, nil)
		var turnsActive atomic.Bool
		turnsActive.Store(true)
		w := NewWorker(r, q, nil, nil, WorkerOptions{PollInterval: 100 * time.Millisecond, Concurrency: 4,
			TurnsActive: turnsActive.Load}, nil)
		const typ = typePrefix + "held"
		var inside, most atomic.Int32
		started := make(chan string, 8)
		release := make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		w.mux.HandleFunc(typ, func(_ context.Context, task *asynq.Task) error {
			n := inside.Add(1)
			defer inside.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			started <- lockKey(task)
			<-release
			return nil
		})
		if err := w.srv.Start(w.mux); err != nil {
			t.Fatal(err)
		}
		defer w.srv.Shutdown()
		defer free()

		ask := func(key, qn string) {
			t.Helper()
			if err := q.enqueue(ctx, typ, key, qn, false, ChatPayload{ChatID: key}); err != nil {
				t.Fatal(err)
			}
		}
		wait := func(what string) string {
			t.Helper()
			select {
			case key := <-started:
				return key
			case <-time.After(10 * time.Second):
				t.Fatalf("%s never started", what)
				return ""
			}
		}
		for _, key := range []string{"a", "b", "c"} {
			ask(key, QueueDefault)
		}
		first := wait("the first job")
		// The other two run on asynq's workers but wait for the lane.
		select {
		case key := <-started:
			t.Fatalf("job %s started beside %s while turns are active", key, first)
		case <-time.After(500 * time.Millisecond):
		}
		ask("urgent", QueueUrgent)
		if key := wait("the urgent job"); key != "urgent" {
			t.Fatalf("%s started, want the urgent job", key)
		}
		turnsActive.Store(false)
		wait("a held job")
		wait("the other held job")
		if n := most.Load(); n != 4 {
			t.Errorf("at most %d jobs ran at once once no turn was active, want all 4", n)
		}
	})
}
