package recall

import "math"

// Weights of the score's components.
type Weights struct {
	Importance, Relevance, Recency, Retention float64
}

// DefaultWeights favour relevance, then importance and retention; recency
// breaks ties among equals.
var DefaultWeights = Weights{Importance: 1, Relevance: 1.5, Recency: 0.5, Retention: 1}

// Fading decides how details fade with elapsed story time.
type Fading struct {
	// On: off means exact recall, retention 1 for everything.
	On bool
	// FoldedFade scales the time a perception folded into a belief is kept
	// (0.5: half as long; 1: no change).
	FoldedFade float64
}

// Retention thresholds: below GistBelow an item is recalled as its gist;
// below GoneBelow it is not recalled at all, unless it is important.
const (
	GistBelow = 0.5
	GoneBelow = 0.15
	// KeptImportance: an item this important never vanishes entirely.
	KeptImportance = 7
)

// Retention is how much of an item's detail is left after the story time
// since it happened: exp(-elapsed/strength), where strength grows with
// importance and with each recall, and shrinks for a folded perception.
// One story hour of play barely fades anything; a month fades all but
// important, often recalled items to their gist.
func Retention(it Item, now int64, f Fading) float64 {
	if !f.On {
		return 1
	}
	elapsedDays := float64(max(now-it.At(), 0)) / MinutesPerDay
	strength := 2 * math.Pow(float64(clampImportance(it.Importance)), 1.3) * (1 + math.Log1p(float64(it.Recalls)))
	if it.FoldedInto != "" && f.FoldedFade > 0 {
		strength *= f.FoldedFade
	}
	return math.Exp(-elapsedDays / strength)
}

// Recency is 1 for now and halves with each story week.
func Recency(it Item, now int64) float64 {
	weeks := float64(max(now-it.At(), 0)) / (7 * MinutesPerDay)
	return math.Pow(0.5, weeks)
}

// Components are a candidate's score parts, kept for the inspector.
type Components struct {
	Importance, Relevance, Recency, Retention, Total float64
}

// Score combines a candidate's components with w.
func Score(c Candidate, now int64, w Weights, f Fading) Components {
	comp := Components{
		Importance: float64(clampImportance(c.Importance)) / 10,
		Relevance:  c.Relevance,
		Recency:    Recency(c.Item, now),
		Retention:  Retention(c.Item, now, f),
	}
	sum := w.Importance + w.Relevance + w.Recency + w.Retention
	if sum <= 0 {
		sum = 1
	}
	comp.Total = (w.Importance*comp.Importance + w.Relevance*comp.Relevance + w.Recency*comp.Recency + w.Retention*comp.Retention) / sum
	return comp
}

func clampImportance(n int) int { return min(max(n, 1), 10) }
