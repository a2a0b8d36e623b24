package belief

// Action is what the engine did with one proposed item.
type Action string

// The actions a Note records.
const (
	// Corrected: the item counts, changed by the engine (a citation removed,
	// a confidence lowered).
	Corrected Action = "corrected"
	// Dropped: the item does not count; the rest of the answer still does.
	Dropped Action = "dropped"
	// Refused: the item's text breaks a rule of form (a field written into
	// it) and does not count.
	Refused Action = "refused"
)

// Reason says why, in fixed words: a reason never quotes story text, so it
// may reach logs, /memory and a repair request.
type Reason string

// The reasons a Note records.
const (
	ReasonMalformed        Reason = "the item could not be read"
	ReasonUnknownPerc      Reason = "cites perceptions that were not shown"
	ReasonNoPerception     Reason = "cites no perception that was shown"
	ReasonUnknownBelief    Reason = "names a belief that does not exist"
	ReasonEmptyText        Reason = "has no text"
	ReasonLongText         Reason = "text is longer than the limit"
	ReasonFieldInText      Reason = "text carries a field"
	ReasonSingleMoment     Reason = "a new belief needs perceptions from two turns or one pivotal event"
	ReasonSureOneTurn      Reason = "sure needs support from two turns; lowered to likely"
	ReasonBadConfidence    Reason = "confidence is not doubtful, likely or sure; set to likely"
	ReasonNotNewer         Reason = "cites perceptions not newer than the belief"
	ReasonNoNewSupport     Reason = "cites no support the belief does not already have"
	ReasonNoContradiction  Reason = "lowering needs a contradicting perception"
	ReasonRecorded         Reason = "the contradiction is already recorded"
	ReasonDoubtedThisRound Reason = "the belief check doubted this belief this round"
	ReasonAlreadyChanged   Reason = "an earlier item of this answer already changes the belief"
	ReasonMergeNeedsTwo    Reason = "a merge needs two existing beliefs"
	ReasonMergeAbove       Reason = "a merge cannot be surer than its surest belief; lowered"
	ReasonBothSides        Reason = "cites the same perception for and against; kept as support"
	ReasonAboutCut         Reason = "about names too many or too long names; those removed"
)

// Note records what the engine did with one item of an answer and why.
type Note struct {
	// Item is the item's place in the answer: "add[0]", "merge[1]".
	Item string `json:"item"`
	// Belief is the id of the belief the item targets, if any.
	Belief string `json:"belief,omitempty"`
	Action Action `json:"action"`
	Reason Reason `json:"reason"`
	// Detail is a safe addition: ids, a field's name, a count.
	Detail string `json:"detail,omitempty"`
}

// String renders the note for logs and /memory.
func (n Note) String() string {
	s := n.Item + ": " + string(n.Action) + ": " + string(n.Reason)
	if n.Detail != "" {
		s += " (" + n.Detail + ")"
	}
	return s
}
