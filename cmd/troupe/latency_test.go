package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"troupe/bot"
)

// TestLatencyHistogramQuantiles compares the histogram's percentiles with
// exact ones over a spread of durations: each within the 2% bucket width.
func TestLatencyHistogramQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h latencyHistogram
	var exact []time.Duration
	for range 50000 {
		// Log-uniform from 10 µs to 10 s, the range a turn's times span.
		d := time.Duration(10_000 * float64(1e6) * r.Float64() * r.Float64() * r.Float64())
		d = max(d, 10*time.Microsecond)
		h.add(d)
		exact = append(exact, d)
	}
	slices.Sort(exact)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := exact[int(q*float64(len(exact)))-1]
		got := h.quantile(q)
		if rel := float64(got-want) / float64(want); rel < -0.001 || rel > 0.021 {
			t.Errorf("quantile(%v) = %v, exact %v (off by %.2f%%)", q, got, want, rel*100)
		}
	}
	if h.max != exact[len(exact)-1] {
		t.Errorf("max = %v, want %v", h.max, exact[len(exact)-1])
	}
	var empty latencyHistogram
	if got := empty.quantile(0.99); got != 0 {
		t.Errorf("empty quantile = %v, want 0", got)
	}
}

// TestTurnTimesSteady: turns before steady() count only in the whole run.
func TestTurnTimesSteady(t *testing.T) {
	var tt turnTimes
	obs := observers{&tt}
	obs.TurnObserved(botTurn("answered", 5*time.Millisecond))
	obs.TurnObserved(botTurn("failed", time.Second))
	tt.steady()
	obs.TurnObserved(botTurn("answered", time.Millisecond))
	if tt.pipeline.n != 2 || tt.steadyPipeline.n != 1 {
		t.Fatalf("recorded %d turns in all, %d steady; want 2 and 1", tt.pipeline.n, tt.steadyPipeline.n)
	}
	if got := tt.steadyPipeline.max; got != time.Millisecond {
		t.Errorf("steady max = %v, want 1ms", got)
	}
}

func botTurn(outcome string, d time.Duration) bot.TurnStats {
	return bot.TurnStats{Outcome: outcome, Pipeline: d, Queued: d / 10}
}
