package bot

import (
	"context"
	"fmt"
	"time"
)

// Helpers the adapters share (like Split): nothing here knows a platform.

// Localized returns texts[lang][key], from the English table when lang has
// none, formatted with args when there are any.
func Localized[K comparable](texts map[string]map[K]string, lang string, key K, args ...any) string {
	t, ok := texts[lang]
	if !ok {
		t = texts["en"]
	}
	if len(args) == 0 {
		return t[key]
	}
	return fmt.Sprintf(t[key], args...)
}

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
