package memory

import (
	"unicode/utf8"

	"troupe/prompt"
)

// CompactParams are the compaction constants (DESIGN "Compaction").
type CompactParams struct {
	Keep              int
	Period            int
	MinCutChars       int
	ManualMinCutChars int
}

// Plan is what a compaction would cut from an uncovered branch.
type Plan struct {
	// Due is true when the compaction should run.
	Due bool
	// Reason says why not, when Due is false.
	Reason string
	// Beats counts the uncovered beats.
	Beats int
	// Cut holds the messages the summary would cover, oldest first.
	Cut []prompt.Turn
	// CutBeats counts the beats in Cut.
	CutBeats int
	// CutChars is the length of Cut's text in characters.
	CutChars int
}

// CoversThroughID is the id of the last cut message, or "".
func (p Plan) CoversThroughID() string {
	if len(p.Cut) == 0 {
		return ""
	}
	return p.Cut[len(p.Cut)-1].ID
}

// Reasons a plan is not due.
const (
	ReasonOff          = "automatic compaction is off (period 0)"
	ReasonTooFewBeats  = "nothing old enough to compact"
	ReasonTooLittleCut = "too little old text to compact"
)

// PlanCompaction decides whether the uncovered branch turns (oldest first)
// should be compacted: automatically when at least keep+period beats are
// uncovered and the cut holds at least MinCutChars; manually (/compact) when
// the cut holds at least ManualMinCutChars. The cut keeps the last keep beats
// and ends on a beat boundary; each message of a trailing unanswered run
// counts as a beat (prompt.CutStarts).
func PlanCompaction(turns []prompt.Turn, p CompactParams, manual bool) Plan {
	starts := prompt.CutStarts(turns)
	plan := Plan{Beats: len(starts)}
	if !manual && p.Period <= 0 {
		plan.Reason = ReasonOff
		return plan
	}
	end := 0
	if len(starts) > p.Keep {
		end = starts[len(starts)-p.Keep]
	} else if len(starts) == p.Keep && len(starts) > 0 {
		end = starts[0]
	}
	plan.Cut = turns[:end]
	plan.CutBeats = max(len(starts)-p.Keep, 0)
	for _, t := range plan.Cut {
		plan.CutChars += utf8.RuneCountInString(t.Content)
	}
	minChars := p.MinCutChars
	if manual {
		minChars = p.ManualMinCutChars
	} else if len(starts) < p.Keep+p.Period {
		plan.Reason = ReasonTooFewBeats
		return plan
	}
	if len(plan.Cut) == 0 {
		plan.Reason = ReasonTooFewBeats
		return plan
	}
	if plan.CutChars < minChars {
		plan.Reason = ReasonTooLittleCut
		return plan
	}
	plan.Due = true
	return plan
}
