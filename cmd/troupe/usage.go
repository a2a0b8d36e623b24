package main

import (
	"context"
	"time"
)

// usageFlush is how often the model calls counted in this process are
// added to the store's daily counts (and once more at Close).
const usageFlush = 30 * time.Second

// flushUsage writes the app's model call counts to the store every
// interval until the returned stop, which writes what is left and waits
// for it. A failed write puts the counts back for the next one.
func (a *app) flushUsage(interval time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	flush := func() {
		rows := a.usage.Drain()
		if len(rows) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.store.AddModelUsage(ctx, rows); err != nil {
			a.usage.Putback(rows)
			a.log.Warn("store the model call counts", "err", err)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				flush()
				return
			case <-t.C:
				flush()
			}
		}
	}()
	var once bool
	return func() {
		if once {
			return
		}
		once = true
		close(quit)
		<-done
	}
}
