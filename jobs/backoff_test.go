package jobs

import (
	"errors"
	"testing"
	"time"
)

func TestBackoffGrowsUpToTheSweepInterval(t *testing.T) {
	t.Parallel()
	const first, sweep = 20 * time.Second, 5 * time.Minute
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 20 * time.Second},
		{1, 20 * time.Second},
		{2, 40 * time.Second},
		{3, 80 * time.Second},
		{4, 160 * time.Second},
		{5, 5 * time.Minute},
		{6, 5 * time.Minute},
		{1000, 5 * time.Minute},
	}
	for _, tt := range tests {
		if got := backoff(tt.failures, first, sweep); got != tt.want {
			t.Errorf("backoff(%d) = %s, want %s", tt.failures, got, tt.want)
		}
	}
	// A sweep interval shorter than the first retry bounds it too.
	if got := backoff(1, first, 5*time.Second); got != 5*time.Second {
		t.Errorf("backoff with a 5s sweep = %s, want 5s", got)
	}
}

func TestRetryDelayFollowsTheKeysBackoff(t *testing.T) {
	t.Parallel()
	w := &Worker{opt: WorkerOptions{SweepInterval: time.Minute}}
	tests := []struct {
		name string
		n    int
		err  error
		want time.Duration
	}{
		{"failed job", 0, retryLater{typ: TypeCompact, key: "c", failures: 3, wait: 80 * time.Second}, 81 * time.Second},
		{"chat still active", 5, notIdle{wait: 3 * time.Second}, 3 * time.Second},
		{"busy lock, first", 0, errors.New("busy"), 2 * time.Second},
		{"busy lock, fourth", 3, errors.New("busy"), 16 * time.Second},
		{"busy lock, capped", 20, errors.New("busy"), time.Minute},
	}
	for _, tt := range tests {
		if got := w.retryDelay(tt.n, tt.err, nil); got != tt.want {
			t.Errorf("%s: retryDelay = %s, want %s", tt.name, got, tt.want)
		}
	}
}
