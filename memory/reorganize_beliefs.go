package memory

import (
	"sort"

	"troupe/belief"
	"troupe/models"
	"troupe/recall"
)

// BeliefsInput is what a character's beliefs are reorganized from.
type BeliefsInput struct {
	Beliefs []belief.Belief
	// Recalls counts each belief's recalls.
	Recalls map[string]int
	// Alive are the perceptions that exist and have not faded past recall
	// (FadedPerceptions).
	Alive map[string]bool
	// Max bounds the character's beliefs in the space; 0: no bound.
	Max int
	// Same are the pairs of belief texts the scribe judged the same.
	Same []Pair
}

// BeliefsPlan is what a reorganize does to a character's beliefs.
type BeliefsPlan struct {
	// Retired go: no perception that supported them is left (or all
	// have faded past recall); Trimmed go for the budget (in Retired too).
	Retired []string
	Trimmed int
	Merges  []models.BeliefMerge
}

// liveBeliefs returns the beliefs some alive perception supports, and the
// ids of the others.
func liveBeliefs(bs []belief.Belief, alive map[string]bool) (kept []belief.Belief, retired []string) {
	for _, b := range bs {
		ok := false
		for _, e := range b.Evidence {
			ok = ok || (e.Stance == belief.Supports && alive[e.Perception])
		}
		if ok {
			kept = append(kept, b)
		} else {
			retired = append(retired, b.ID)
		}
	}
	return kept, retired
}

// BeliefPairs returns the pairs of a character's beliefs the engine
// leaves to the scribe (as HandbookPairs), among those that stay.
func BeliefPairs(in BeliefsInput, judged map[string]bool) []Pair {
	kept, _ := liveBeliefs(in.Beliefs, in.Alive)
	groups := mergeBeliefGroups(kept, nil)
	texts := make([]worded, 0, len(groups))
	for _, g := range groups {
		texts = append(texts, worded{g[0].Text, words(g[0].Text)})
	}
	return nearPairs(texts, judged, MaxPairs)
}

// mergeBeliefGroups groups beliefs that restate one another (or that a
// pair of same names), the kept one first: the one with the most words,
// then the surer, then the older.
func mergeBeliefGroups(bs []belief.Belief, same map[string]bool) [][]belief.Belief {
	es := make([]entry, len(bs))
	for i, b := range bs {
		es[i] = entry{line: i, text: b.Text, words: words(b.Text)}
	}
	idx := groupSame(es, same)
	out := make([][]belief.Belief, 0, len(idx))
	for _, ids := range idx {
		g := make([]belief.Belief, len(ids))
		for i, k := range ids {
			g[i] = bs[k]
		}
		sort.SliceStable(g, func(i, k int) bool {
			wi, wk := len(words(g[i].Text)), len(words(g[k].Text))
			if wi != wk {
				return wi > wk
			}
			return g[i].Confidence > g[k].Confidence
		})
		out = append(out, g)
	}
	return out
}

// PlanBeliefs reorganizes a character's beliefs without a model, given
// the pairs the scribe judged the same: a belief no alive perception
// supports retires; beliefs that restate one another (or were judged the
// same) merge into the one with the most words, which takes their
// evidence; past the budget, the least sure, least recalled, longest
// unchanged beliefs retire. A retired belief's perceptions stay as they
// are: they remain the chats' own record.
func PlanBeliefs(in BeliefsInput) BeliefsPlan {
	var plan BeliefsPlan
	kept, retired := liveBeliefs(in.Beliefs, in.Alive)
	plan.Retired = retired
	same := map[string]bool{}
	for _, p := range in.Same {
		same[PairKey(p.A, p.B)] = true
	}
	var rest []belief.Belief
	for _, g := range mergeBeliefGroups(kept, same) {
		rest = append(rest, g[0])
		if len(g) == 1 {
			continue
		}
		m := models.BeliefMerge{Keep: g[0].ID}
		for _, b := range g[1:] {
			m.Drop = append(m.Drop, b.ID)
		}
		plan.Merges = append(plan.Merges, m)
	}
	if in.Max > 0 && len(rest) > in.Max {
		sort.SliceStable(rest, func(i, k int) bool {
			a, b := rest[i], rest[k]
			if a.Confidence != b.Confidence {
				return a.Confidence < b.Confidence
			}
			if in.Recalls[a.ID] != in.Recalls[b.ID] {
				return in.Recalls[a.ID] < in.Recalls[b.ID]
			}
			return a.ChangedTurn < b.ChangedTurn
		})
		over := rest[:len(rest)-in.Max]
		for _, b := range over {
			plan.Retired = append(plan.Retired, b.ID)
			plan.Trimmed++
		}
		// A merge into a belief that retires retires its group.
		gone := map[string]bool{}
		for _, b := range over {
			gone[b.ID] = true
		}
		var ms []models.BeliefMerge
		for _, m := range plan.Merges {
			if gone[m.Keep] {
				plan.Retired = append(plan.Retired, m.Drop...)
				continue
			}
			ms = append(ms, m)
		}
		plan.Merges = ms
	}
	sort.Strings(plan.Retired)
	return plan
}

// FadingRules are memory.fading and memory.folded_fade.
type FadingRules = recall.Fading

// FadedPerceptions applies the fading rules to perceptions, each on its own
// chat's story clock (the least time any chat's clock puts on it, so
// nothing is faded that some chat would still recall in detail): fold are
// those past detail that have a gist (recall gives only the gist), alive
// those not faded past recall (or important enough never to vanish).
func FadedPerceptions(ps map[string]models.ReorganizePerception, clocks map[string]int64, f FadingRules) (fold []string, alive map[string]bool) {
	alive = make(map[string]bool, len(ps))
	for id, p := range ps {
		it := recall.Item{Importance: p.Importance, Recalls: p.Recalls, StoryMinute: p.StoryMinute}
		if p.Folded {
			it.FoldedInto = "folded"
		}
		now, ok := clocks[p.ChatID]
		if !ok {
			now = p.StoryMinute
		}
		r := recall.Retention(it, now, f)
		alive[id] = r >= recall.GoneBelow || p.Importance >= recall.KeptImportance
		if r < recall.GistBelow && p.Gist != "" && p.Text != p.Gist {
			fold = append(fold, id)
		}
	}
	sort.Strings(fold)
	return fold, alive
}
