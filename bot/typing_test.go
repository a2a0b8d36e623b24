package bot_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"troupe/bot"
)

func TestKeepDoingStopsOnStopAndAtMax(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		bot.KeepDoing(context.Background(), stop, 10*time.Millisecond, time.Hour, func() { n.Add(1) })
		close(done)
	}()
	for n.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	// max bounds it even when nobody stops it: called at once, then never.
	n.Store(0)
	bot.KeepDoing(context.Background(), nil, time.Hour, 20*time.Millisecond, func() { n.Add(1) })
	if got := n.Load(); got != 1 {
		t.Errorf("calls before max = %d, want 1", got)
	}
}

func TestLocalizedFallsBackToEnglish(t *testing.T) {
	t.Parallel()
	texts := map[string]map[int]string{"en": {0: "hello %s"}, "zh": {0: "你好 %s"}}
	if got := bot.Localized(texts, "fr", 0, "Ada"); got != "hello Ada" {
		t.Errorf("fr: %q", got)
	}
	if got := bot.Localized(texts, "zh", 0, "Ada"); got != "你好 Ada" {
		t.Errorf("zh: %q", got)
	}
}
