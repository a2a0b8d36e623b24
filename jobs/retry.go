package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"
)

// notIdle defers a recap until its chat has rested for the idle time.
type notIdle struct{ wait time.Duration }

func (e notIdle) Error() string { return fmt.Sprintf("jobs: chat still active; recap in %s", e.wait) }

// retryLater is a failed memory job whose task waits out its key's backoff
// (early: the task came before the key's next try and did not run). Its
// text is what asynq keeps in Redis: the kind, the key and the count,
// never the failure's reason, which can quote story text.
type retryLater struct {
	typ, key string
	failures int
	wait     time.Duration
	early    bool
}

func (e retryLater) Error() string {
	return fmt.Sprintf("jobs: %s %s failed %d times in a row %s; next try in %s", e.typ, e.key, e.failures, failingMark, e.wait.Round(time.Millisecond))
}

// failingMark is in the error text of every task that waits out its key's
// backoff (retryLater), by which a drain tells it from work in flight.
const failingMark = "(reason in the job record)"

// failingTask reports whether a task's last error says it waits out its
// key's backoff.
func failingTask(lastErr string) bool { return strings.Contains(lastErr, failingMark) }

// backoff is how long a key waits after its nth failure in a row: first,
// then twice as long each time, never longer than most.
func backoff(failures int, first, most time.Duration) time.Duration {
	d := first
	for i := 1; i < failures && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

func (w *Worker) retryDelay(n int, err error, _ *asynq.Task) time.Duration {
	var ni notIdle
	if errors.As(err, &ni) {
		return ni.wait
	}
	var rl retryLater
	if errors.As(err, &rl) {
		// asynq keeps a task's time in whole seconds and may run it up
		// to a second early: a second more lands it after the key's
		// next try.
		return rl.wait + time.Second
	}
	// A busy lock or a lost connection: the task's own retries back off.
	return backoff(n+1, 2*time.Second, w.opt.SweepInterval)
}

// nextTries is when the sweep queues the work of each failing key: at the
// next try its job record names; a key whose next try has passed (or was
// never set) gets a slot of its own, spread over the sweep interval, so a
// process that starts after many failures does not try them all at once.
// The slot is written back as the key's next try, which every process's
// whenDue then keeps to.
type nextTries struct {
	w     *Worker
	at0   time.Time
	step  time.Duration
	slots int
	next  map[string]time.Time
	due   map[string]bool
}

func (w *Worker) nextTries(ctx context.Context) (*nextTries, error) {
	recs, err := w.store.FailedJobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs: sweep: %w", err)
	}
	now := time.Now()
	t := &nextTries{w: w, at0: now, next: map[string]time.Time{}, due: map[string]bool{}}
	for _, r := range recs {
		k := r.Kind + "\x00" + r.Key
		if at := w.nextTry(r); at.After(now) {
			t.next[k] = at
		} else {
			t.due[k] = true
		}
	}
	t.step = w.opt.SweepInterval / time.Duration(len(t.due)+1)
	return t, nil
}

// at returns ctx for enqueuing the work of kind and key: as it is for a
// key that is not failing, else holding the task until the key's turn.
func (t *nextTries) at(ctx context.Context, kind, key string) context.Context {
	k := kind + "\x00" + key
	if at, ok := t.next[k]; ok {
		return notBefore(ctx, at)
	}
	if !t.due[k] {
		return ctx
	}
	at := t.at0.Add(time.Duration(t.slots) * t.step)
	t.slots++
	delete(t.due, k)
	t.next[k] = at
	if err := t.w.store.SetJobRetry(ctx, kind, key, at); err != nil {
		t.w.log.Warn("sweep: record next try", "kind", kind, "key", key, "err", err)
	}
	return notBefore(ctx, at)
}
