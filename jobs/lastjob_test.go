package jobs_test

import (
	"context"
	"testing"
	"time"

	"troupe/jobs"
)

// LastJobEnded is when the last job's work was done: after what it wrote,
// and at least a poll before Drain returns (Drain reads the queue empty
// twice, a poll apart), which is why troupe bench counts its drain from it.
func TestLastJobEndedIsWhenTheWorkWasDone(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 80)
			w, stop := r.runWorker(t, jobs.WorkerOptions{PollInterval: 200 * time.Millisecond, SweepInterval: time.Hour})
			defer stop()
			if !w.LastJobEnded().IsZero() {
				t.Fatalf("LastJobEnded = %v before any job", w.LastJobEnded())
			}
			asked := time.Now()
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			sums := r.waitSummaries(t, 1)
			must(t, r.queue.Drain(context.Background(), 10*time.Second))
			returned := time.Now()
			last := w.LastJobEnded()
			if !last.After(asked) {
				t.Fatalf("LastJobEnded = %v, before the job was asked for at %v", last, asked)
			}
			if last.Before(sums[0].CreatedAt) {
				t.Errorf("LastJobEnded = %v, before the job's summary was written at %v", last, sums[0].CreatedAt)
			}
			if gap := returned.Sub(last); gap < 100*time.Millisecond {
				t.Errorf("Drain returned %v after the last job ended; want at least its poll (100ms)", gap)
			}
		})
	}
}
