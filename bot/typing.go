package bot

import (
	"context"
	"time"
)

// KeepDoing calls do at once and then every interval, until stop is closed,
// ctx ends or max has passed: a typing indicator, which platforms drop after
// a few seconds, is kept up this way.
func KeepDoing(ctx context.Context, stop <-chan struct{}, every, max time.Duration, do func()) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	limit := time.NewTimer(max)
	defer limit.Stop()
	for {
		do()
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		case <-tick.C:
		}
	}
}
