package belief

import "sort"

// Forgotten is what forgetting perceptions takes from a character's beliefs.
type Forgotten struct {
	// Deleted are the beliefs that go: each cites a forgotten perception,
	// for or against, or was merged from one that goes. Deleted, not edited:
	// its wording may carry the forgotten chat.
	Deleted []string
	// Renewed are the remaining perceptions those beliefs cited: they become
	// new again (and no longer folded), so the next reflection re-forms what
	// the rest still supports.
	Renewed []string
}

// Forget works out, without a model, which beliefs a set of forgotten
// perceptions takes with it and which other perceptions become new again.
// Both lists are sorted.
func Forget(beliefs []Belief, forgotten map[string]bool) Forgotten {
	gone := map[string]bool{}
	for _, b := range beliefs {
		for _, e := range b.Evidence {
			if forgotten[e.Perception] {
				gone[b.ID] = true
				break
			}
		}
	}
	// A merged belief goes with any belief it was merged from, at any depth.
	for changed := true; changed; {
		changed = false
		for _, b := range beliefs {
			if gone[b.ID] {
				continue
			}
			for _, src := range b.MergedFrom {
				if gone[src] {
					gone[b.ID], changed = true, true
					break
				}
			}
		}
	}
	var out Forgotten
	renewed := map[string]bool{}
	for _, b := range beliefs {
		if !gone[b.ID] {
			continue
		}
		out.Deleted = append(out.Deleted, b.ID)
		for _, e := range b.Evidence {
			if !forgotten[e.Perception] && !renewed[e.Perception] {
				renewed[e.Perception] = true
				out.Renewed = append(out.Renewed, e.Perception)
			}
		}
	}
	sort.Strings(out.Deleted)
	sort.Strings(out.Renewed)
	return out
}
