package main

import (
	"math"
	"sync"
	"time"

	"troupe/bot"
)

// latencyBuckets is the number of buckets of a latencyHistogram: each is
// about 2% wider than the one before, from 1 µs to well over an hour, so a
// percentile read from it is within 2% of the exact one.
const latencyBuckets = 1200

// latencyGrowth is the ratio of one bucket's upper bound to the previous one's.
const latencyGrowth = 1.02

// latencyHistogram records durations in a fixed number of buckets: its
// memory does not grow with the number of turns a bench runs.
type latencyHistogram struct {
	counts [latencyBuckets]uint64
	n      uint64
	max    time.Duration
}

func latencyBucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	i := int(math.Ceil(math.Log(us) / math.Log(latencyGrowth)))
	return min(i, latencyBuckets-1)
}

// upper is the upper bound of bucket i.
func latencyUpper(i int) time.Duration {
	return time.Duration(math.Pow(latencyGrowth, float64(i)) * float64(time.Microsecond))
}

func (h *latencyHistogram) add(d time.Duration) {
	h.counts[latencyBucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

// quantile returns the q-th quantile (0 < q ≤ 1) as its bucket's upper
// bound, never more than the largest value seen; 0 when nothing was recorded.
func (h *latencyHistogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(latencyUpper(i), h.max)
		}
	}
	return h.max
}

// summary returns the median, the 99th percentile and the maximum in
// milliseconds.
func (h *latencyHistogram) summary() (p50, p99, maxMS float64) {
	return ms(h.quantile(0.5)), ms(h.quantile(0.99)), ms(h.max)
}

// turnTimes observes the pipeline's turns for troupe bench: the pipeline's
// own time and the wait for a turn slot, over the whole run and from the
// moment steady is called.
type turnTimes struct {
	mu             sync.Mutex
	steadyOn       bool
	pipeline, wait latencyHistogram
	steadyPipeline latencyHistogram
	steadyWait     latencyHistogram
	// recalls counts the turns by how their recall went.
	recalls map[string]int
}

var _ bot.Observer = (*turnTimes)(nil)

// TurnObserved records an answered turn's times.
func (t *turnTimes) TurnObserved(s bot.TurnStats) {
	if s.Outcome != "answered" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pipeline.add(s.Pipeline)
	t.wait.add(s.Queued)
	if s.Recall != "" {
		if t.recalls == nil {
			t.recalls = map[string]int{}
		}
		t.recalls[s.Recall]++
	}
	if t.steadyOn {
		t.steadyPipeline.add(s.Pipeline)
		t.steadyWait.add(s.Queued)
	}
}

// Forgotten is not measured.
func (t *turnTimes) Forgotten(string) {}

// SendFailed is not measured.
func (t *turnTimes) SendFailed(string) {}

// Panicked is not measured.
func (t *turnTimes) Panicked(string) {}

// steady starts the steady-state histograms.
func (t *turnTimes) steady() {
	t.mu.Lock()
	t.steadyOn = true
	t.mu.Unlock()
}

// observers tells every observer in it.
type observers []bot.Observer

func (os observers) TurnObserved(s bot.TurnStats) {
	for _, o := range os {
		o.TurnObserved(s)
	}
}

func (os observers) Forgotten(platform string) {
	for _, o := range os {
		o.Forgotten(platform)
	}
}

func (os observers) SendFailed(platform string) {
	for _, o := range os {
		o.SendFailed(platform)
	}
}

func (os observers) Panicked(where string) {
	for _, o := range os {
		o.Panicked(where)
	}
}
