package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/jobs"
)

// While turns are active, memory jobs do their own work one at a time but
// wait for the scribe side by side: a job gives the lane back for its call
// and takes it again after, so three compactions owed at once all reach
// the model together, and all three finish with the turns active all along.
func TestJobsWaitForTheScribeSideBySideWhileTurnsAreActive(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 80)
			chats := []string{r.chatID, seedChatIn(t, r.st, "ada/second", 80), seedChatIn(t, r.st, "ada/third", 80)}
			var inFlight, most atomic.Int32
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				// Hold each call until all three are in, or a moment:
				// the client gives up after 2 s.
				for deadline := time.Now().Add(time.Second); inFlight.Load() < 3 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
				return r.scribe.Respond(req)
			})
			stop := r.startWorkerOn(t, jobs.WorkerOptions{Concurrency: 4, TurnsActive: func() bool { return true }})
			defer stop()
			ctx := context.Background()
			for _, id := range chats {
				must(t, r.queue.Compact(ctx, id, false))
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				done := 0
				for _, id := range chats {
					sums, err := r.st.ChatSummaries(ctx, id)
					must(t, err)
					if len(sums) > 0 {
						done++
					}
				}
				if done == len(chats) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d compactions written with the turns active", done, len(chats))
				}
			}
			if n := most.Load(); n != 3 {
				t.Errorf("at most %d scribe calls at once, want all 3: a job waiting for the model kept the jobs' lane", n)
			}
		})
	}
}
