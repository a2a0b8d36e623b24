package prompt

import "errors"

// ErrNoFit is returned by FitPrompt when even the last message alone, with
// only the prompt's fixed parts, is over the limit.
var ErrNoFit = errors.New("prompt: the last message does not fit the context window")

// Fit is an assembled prompt within its limit and what was left out of it.
type Fit struct {
	Messages []Message
	// Tokens is the prompt's count.
	Tokens int
	// Dropped counts the history messages left out, oldest first.
	Dropped int
	// Shortened is true when more than old beats went: messages of the last
	// keep beats, or the lore, scene, recall, players note, resident or chat
	// summary. The user should hear that this reply did not see all of the
	// recent story.
	Shortened bool
	// EndScene is the scene the prompt sends at its end: "" when it sends
	// none there (none, left out for room, or kept in place, KeptSceneAt).
	EndScene string
	// Input is what Messages were assembled from, after what was left
	// out: AssembleBlocks(Input) names their blocks.
	Input AssembleInput
}

// FitPrompt assembles in and, while count says the prompt is over limit,
// leaves out as little as it can, in this order: the oldest beats (never the
// last keep); then the oldest remaining messages, one by one, down to the
// last one (the message being answered); then the lore, scene, recall and
// players note, the resident summary and the chat summary. Fewer messages never count more,
// so each step searches for its smallest cut in O(log n) counts. It returns
// ErrNoFit when nothing is left to leave out.
func FitPrompt(in AssembleInput, keep int, count func([]Message) int, limit int) (Fit, error) {
	try := func(in AssembleInput) (Fit, bool) {
		msgs := Assemble(in)
		n := count(msgs)
		return Fit{Messages: msgs, Tokens: n, EndScene: endScene(in), Input: in}, n <= limit
	}
	if f, ok := try(in); ok {
		return f, nil
	}
	history := in.History
	cuts, protected := historyCuts(history, keep)
	// Binary search for the first cut that fits; cuts[0] (nothing left out)
	// is known not to.
	lo, hi := 1, len(cuts)
	var best Fit
	for lo < hi {
		mid := (lo + hi) / 2
		in.History = history[cuts[mid]:]
		if f, ok := try(in); ok {
			best, hi = f, mid
		} else {
			lo = mid + 1
		}
	}
	if lo < len(cuts) {
		// hi moves only on a fit, so best is the fit at cuts[lo].
		best.Dropped = cuts[lo]
		best.Shortened = lo > protected
		return best, nil
	}
	// Only the last message is left: the optional parts go next.
	if len(history) > 0 {
		in.History = history[len(history)-1:]
	}
	for _, strip := range []func(*AssembleInput){
		func(in *AssembleInput) { in.Lore, in.Scene, in.Recall, in.Players = nil, "", "", nil },
		func(in *AssembleInput) { in.Resident = "" },
		func(in *AssembleInput) { in.Summary = "" },
	} {
		strip(&in)
		if f, ok := try(in); ok {
			f.Dropped = len(history) - len(in.History)
			f.Shortened = true
			return f, nil
		}
	}
	return Fit{}, ErrNoFit
}

// Bare returns in with only what every prompt must carry: the character,
// the conventions, the post-history instructions and the last history
// message. A message whose bare prompt is over the limit can never be sent.
func (in AssembleInput) Bare() AssembleInput {
	in.Lore, in.Scene, in.Recall, in.Resident, in.Summary = nil, "", "", "", ""
	if len(in.History) > 1 {
		in.History = in.History[len(in.History)-1:]
	}
	return in
}

// historyCuts lists where history may start, from nothing left out to only
// its last message: first at beat starts as compaction counts them
// (CutStarts; the first one leaves out only what comes before any beat, a
// greeting), leaving at least keep beats, then at every later message. cuts[protected] is the last cut that leaves out
// old beats only.
func historyCuts(history []Turn, keep int) (cuts []int, protected int) {
	cuts = []int{0}
	starts := CutStarts(history)
	for n := 0; n <= len(starts)-max(keep, 1); n++ {
		if starts[n] > 0 {
			cuts = append(cuts, starts[n])
		}
	}
	protected = len(cuts) - 1
	for i := cuts[protected] + 1; i < len(history); i++ {
		cuts = append(cuts, i)
	}
	return cuts, protected
}
