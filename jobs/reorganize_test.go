package jobs_test

import (
	"context"
	"testing"
	"time"

	"troupe/jobs"
	"troupe/models"
)

// TestReorganizeRunsThroughTheQueue: the worker enqueues a card's
// reorganize once a consolidation brings its writes to the threshold, and
// the sweeper enqueues one owed by the night for a pair written to since;
// either way it runs through Redis and records its run.
func TestReorganizeRunsThroughTheQueue(t *testing.T) {
	for _, b := range backends(t) {
		for _, how := range []string{"writes", "night"} {
			t.Run(b.name+"/"+how, func(t *testing.T) {
				r := newRig(t, b, 3)
				ctx := context.Background()
				opt := jobs.WorkerOptions{PollInterval: 200 * time.Millisecond, SweepInterval: time.Hour}
				if how == "writes" {
					opt.ReorganizeBatches = 1
				} else {
					// Nightly only: the first sweep comes at start, before
					// anything was written, and finds nothing owed; the
					// next, after the consolidation, finds the night's run.
					opt.SweepInterval = time.Second
					opt.ReorganizeNight = func(now time.Time) time.Time { return now.Add(-time.Millisecond) }
				}
				_, stop := r.runWorker(t, opt)
				defer stop()
				if _, err := r.mem.Recap(ctx, r.chatID); err != nil {
					t.Fatal(err)
				}
				must(t, r.queue.Consolidate(ctx, "maren", "console:local:ada"))
				deadline := time.Now().Add(30 * time.Second)
				for {
					st, err := r.st.Reorganize(ctx, "maren", "console:local:ada")
					must(t, err)
					if st.LastRunAt != nil {
						if st.Batches != 0 {
							t.Errorf("writes counted after the run = %d, want reset", st.Batches)
						}
						break
					}
					if time.Now().After(deadline) {
						mem, _ := r.st.LoadMemory(ctx, "maren", "console:local:ada")
						t.Fatalf("no reorganize ran within 30s (state %+v, manifest %+v)", st, mem.Entries)
					}
					time.Sleep(100 * time.Millisecond)
				}
				// The run stores its state before the job's record of how it
				// went is written: wait for that too.
				for {
					var recs []models.JobRecord
					must(t, r.st.DB().Where("kind = ?", "reorganize").Find(&recs).Error)
					if len(recs) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no job record of kind reorganize within 30s of the run")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	}
}
