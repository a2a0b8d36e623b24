package recall

import (
	"slices"
	"sort"
	"strings"
)

// Params configure one selection.
type Params struct {
	Weights Weights
	Fading  Fading
	// MaxItems is how many items MMR picks; associations may add up to
	// MaxItems/2 more within MaxChars.
	MaxItems int
	// MaxChars bounds the rendered items' text.
	MaxChars int
	// Lambda trades relevance (1) against variety (0) in MMR.
	Lambda float64
	// Now is the current story time in minutes.
	Now int64
	// InPrompt are the message ids whose turns the prompt has verbatim.
	InPrompt map[string]bool
	// Said are the new messages' texts, and Shown the ids of the items
	// that recall blocks kept earlier in the prompt show: an item that
	// repeats one of them (Redundant) is not recalled, since the prompt
	// already says it. Shown items themselves may still be picked.
	Said  []string
	Shown map[string]bool
}

// Redundant is the term overlap (Jaccard) at which an item repeats one
// already picked: the same words with a name or a number changed. It is
// not picked, so that a run of look-alike memories (the same question
// asked on many days) takes one line of the block rather than all of it.
const Redundant = 0.8

// whyRepeats and whyEchoes are the inspector's reasons for an item left
// out by Redundant: it repeats a picked item, or what the prompt says.
const (
	whyRepeats = "repeats a picked item"
	whyEchoes  = "repeats what the prompt says"
)

// DefaultParams are the defaults of recall.max_items and max_chars.
func DefaultParams() Params {
	return Params{Weights: DefaultWeights, Fading: Fading{On: true, FoldedFade: 0.5}, MaxItems: 8, MaxChars: 1500, Lambda: 0.7}
}

// Scored is a candidate with its score, for the inspector.
type Scored struct {
	Candidate
	Components
	// Faded: given as its gist. Gone: faded past recall.
	Faded, Gone bool
	// Picked, and why: "mmr" or "association"; or why not.
	Picked bool
	Why    string
}

// Select scores the candidates and picks what the character recalls: items
// already in the prompt verbatim and perceptions folded into a candidate
// belief are left out, faded-out items are dropped (never important ones,
// which stay as their gist), so are items that repeat a new message or a
// kept item (dropEchoes), then MMR picks MaxItems that are relevant and
// different from each other, leaving out any that repeats a picked one
// (Redundant), and items sharing a person or place with a picked one come
// along while MaxChars allows. It returns every candidate
// scored, picked ones first in the order they were picked.
func Select(cands []Candidate, p Params) []Scored {
	beliefs := map[string]bool{}
	for _, c := range cands {
		if c.Kind == Belief {
			beliefs[c.ID] = true
		}
	}
	all := make([]Scored, 0, len(cands))
	var pool []int
	for _, c := range cands {
		s := Scored{Candidate: c, Components: Score(c, p.Now, p.Weights, p.Fading)}
		switch {
		case c.MessageID != "" && p.InPrompt[c.MessageID]:
			s.Why = "in the prompt verbatim"
		case c.FoldedInto != "" && beliefs[c.FoldedInto]:
			s.Why = "folded into a belief that is a candidate"
		case s.Retention < GoneBelow && c.Importance < KeptImportance:
			s.Gone, s.Why = true, "faded"
		default:
			s.Faded = s.Retention < GistBelow && c.Gist != ""
			pool = append(pool, len(all))
		}
		all = append(all, s)
	}
	// At equal scores the newer item goes first, so MMR picks it and a look-
	// alike older one is left out as its repeat: a correction told when
	// story time has not moved wins over the stale fact it corrects.
	sort.SliceStable(pool, func(i, j int) bool {
		a, b := all[pool[i]], all[pool[j]]
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return newer(a.Item, b.Item)
	})
	terms := make(map[int][]string, len(pool))
	for _, i := range pool {
		terms[i] = termSet(all[i].Text)
	}
	pool = dropEchoes(all, pool, terms, p)
	// sim[k] is pool[k]'s greatest overlap with a picked item, brought up
	// to date with each pick rather than recomputed over all picks.
	sim := make([]float64, len(pool))
	var picked []int
	used := 0
	for len(picked) < p.MaxItems && len(pool) > 0 {
		best, bestVal := -1, 0.0
		for k, i := range pool {
			val := p.Lambda*all[i].Total - (1-p.Lambda)*sim[k]
			if best < 0 || val > bestVal {
				best, bestVal = k, val
			}
		}
		i, repeats := pool[best], sim[best] >= Redundant
		pool = append(pool[:best], pool[best+1:]...)
		sim = append(sim[:best], sim[best+1:]...)
		if repeats {
			all[i].Why = whyRepeats
			continue
		}
		n := len([]rune(all[i].shown()))
		if p.MaxChars > 0 && used+n > p.MaxChars {
			all[i].Why = "over the character budget"
			continue
		}
		used += n
		all[i].Picked, all[i].Why = true, "mmr"
		picked = append(picked, i)
		for k, j := range pool {
			sim[k] = max(sim[k], Overlap(terms[j], terms[i]))
		}
	}
	extra := 0
	for _, i := range pool {
		if extra >= max(p.MaxItems/2, 1) || all[i].Picked {
			continue
		}
		if slices.ContainsFunc(picked, func(j int) bool { return Overlap(terms[i], terms[j]) >= Redundant }) {
			all[i].Why = whyRepeats
			continue
		}
		for _, j := range picked {
			if all[j].Why == "mmr" && shares(all[i].Item, all[j].Item) {
				n := len([]rune(all[i].shown()))
				if p.MaxChars > 0 && used+n > p.MaxChars {
					break
				}
				used += n
				all[i].Picked, all[i].Why = true, "association"
				all[i].Sources = append(all[i].Sources, Association)
				picked = append(picked, i)
				extra++
				break
			}
		}
	}
	out := make([]Scored, 0, len(all))
	for _, i := range picked {
		out = append(out, all[i])
	}
	for _, s := range all {
		if !s.Picked {
			if s.Why == "" {
				s.Why = "not picked"
			}
			out = append(out, s)
		}
	}
	return out
}

// dropEchoes takes out of pool the items that repeat a new message or an
// item a kept block shows (p.Said, p.Shown): a question asked again would
// otherwise bring back its earlier askings, each a line that tells the
// character nothing new.
func dropEchoes(all []Scored, pool []int, terms map[int][]string, p Params) []int {
	// An echo of a shown item keeps that item, so that an update newer than
	// what the prompt shows is never taken for its repeat.
	type echo struct {
		terms []string
		shown *Item
	}
	var echoes []echo
	for _, t := range p.Said {
		if ts := termSet(t); len(ts) > 0 {
			echoes = append(echoes, echo{terms: ts})
		}
	}
	for _, i := range pool {
		if p.Shown[all[i].ID] {
			echoes = append(echoes, echo{terms: terms[i], shown: &all[i].Item})
		}
	}
	if len(echoes) == 0 {
		return pool
	}
	return slices.DeleteFunc(pool, func(i int) bool {
		if p.Shown[all[i].ID] {
			return false
		}
		if slices.ContainsFunc(echoes, func(e echo) bool {
			return (e.shown == nil || !newer(all[i].Item, *e.shown)) && Overlap(terms[i], e.terms) >= Redundant
		}) {
			all[i].Why = whyEchoes
			return true
		}
		return false
	})
}

// shown is the text the character is given: the gist when faded.
func (s Scored) shown() string {
	if s.Faded {
		return s.Gist
	}
	return s.Text
}

// shares reports whether a and b concern a common person, place or thing.
func shares(a, b Item) bool {
	names := map[string]bool{}
	for _, n := range b.About {
		names[strings.ToLower(n)] = true
	}
	if b.Place != "" {
		names[strings.ToLower(b.Place)] = true
	}
	for _, n := range a.About {
		if names[strings.ToLower(n)] {
			return true
		}
	}
	return a.Place != "" && names[strings.ToLower(a.Place)]
}

// newer reports whether a comes later in the space's story than b: a later
// turn, or the same turn and a later story minute.
func newer(a, b Item) bool {
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	return a.StoryMinute > b.StoryMinute
}
