package jobs

import (
	"context"
	"testing"
	"time"
)

// A job gives the lane back while it waits and the next job takes it; when
// the wait ends and the lane stays taken (its holder may wait for a lock
// the first job holds), the first job goes on without it after Worker.retake
// instead of waiting for ever.
func TestLaneGoesBackForAWaitAndIsNotWaitedForForEver(t *testing.T) {
	w := &Worker{lane: make(chan struct{}, 1), retake: 300 * time.Millisecond, opt: WorkerOptions{TurnsActive: func() bool { return true }}}
	ctx := context.Background()
	first, second := &laneHold{w: w}, &laneHold{w: w}
	if err := first.take(ctx, 0); err != nil || !first.held {
		t.Fatalf("the first job did not take the free lane (held %v, %v)", first.held, err)
	}
	took := make(chan error, 1)
	go func() { took <- second.take(ctx, 0) }()
	select {
	case <-took:
		t.Fatal("the second job took the lane the first holds")
	case <-time.After(100 * time.Millisecond):
	}
	done := first.Waiting(ctx)
	select {
	case err := <-took:
		if err != nil || !second.held {
			t.Fatalf("the second job did not get the lane (held %v, %v)", second.held, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lane did not go back while the first job waited")
	}
	// Two waits at once: the lane comes back once, after the last.
	inner := first.Waiting(ctx)
	inner()
	start := time.Now()
	done()
	if d := time.Since(start); d < w.retake || d > w.retake+2*time.Second {
		t.Errorf("the first job waited %v for the lane the second holds, want about %v", d, w.retake)
	}
	if first.held {
		t.Error("the first job holds the lane the second holds")
	}
	second.release()
	first.Waiting(ctx)()
	if !first.held {
		t.Error("the first job did not take the free lane after its wait")
	}
	first.release()
	select {
	case w.lane <- struct{}{}:
	default:
		t.Error("the lane is still taken after both jobs let go")
	}
}

// With no turn active, a job neither waits nor holds the lane.
func TestLaneIsNotTakenWithoutTurns(t *testing.T) {
	w := &Worker{lane: make(chan struct{}, 1), opt: WorkerOptions{TurnsActive: func() bool { return false }}}
	w.lane <- struct{}{}
	h := &laneHold{w: w}
	if err := h.take(context.Background(), 0); err != nil || h.held {
		t.Fatalf("take with no turn active: held %v, %v", h.held, err)
	}
}
