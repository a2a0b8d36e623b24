package recall

import (
	"math"
	"sort"
)

// Hit is one index entry a search found: item id and kind matched term.
type Hit struct {
	ID   string
	Kind Kind
	Term string
}

// Ranked is an item the index search found, with its relevance (0–1) to
// the query and how it was found.
type Ranked struct {
	ID        string
	Kind      Kind
	Relevance float64
	Sources   []Source
}

// cueWeight is what a matched name counts beside the words: naming someone
// or something is the strongest cue there is.
const cueWeight = 0.5

// Rank orders the items of hits by relevance to the query's words and
// returns at most limit. A word's weight falls with how many items it found
// (perTerm found is as common as a word gets: the search fetched no more),
// like inverse document frequency without counting the whole index; words
// that found nothing still count in the whole, so an item matching half of
// the question scores half. A matched cue adds cueWeight.
func Rank(hits []Hit, words []string, perTerm, limit int) []Ranked {
	found := map[string]int{}
	for _, h := range hits {
		found[h.Term]++
	}
	weight := func(t string) float64 {
		n := max(found[t], 1)
		return math.Log(1 + float64(max(perTerm, 1))/float64(n))
	}
	total := 0.0
	for _, w := range words {
		total += weight(w)
	}
	type acc struct {
		Ranked
		words, cues float64
		order       int
	}
	byID := map[string]*acc{}
	var order []*acc
	for _, h := range hits {
		a := byID[h.ID]
		if a == nil {
			a = &acc{Ranked: Ranked{ID: h.ID, Kind: h.Kind}, order: len(order)}
			byID[h.ID] = a
			order = append(order, a)
		}
		if isCue(h.Term) {
			if a.cues == 0 {
				a.Sources = append(a.Sources, Cue)
			}
			a.cues += cueWeight
		} else {
			if a.words == 0 {
				a.Sources = append(a.Sources, Words)
			}
			a.words += weight(h.Term)
		}
	}
	for _, a := range order {
		rel := 0.0
		if total > 0 {
			rel = a.words / total
		}
		a.Relevance = math.Min(1, rel+math.Min(a.cues, 2*cueWeight))
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].Relevance > order[j].Relevance })
	out := make([]Ranked, 0, min(len(order), limit))
	for _, a := range order {
		if len(out) == limit {
			break
		}
		out = append(out, a.Ranked)
	}
	return out
}

func isCue(t string) bool { return len(t) > 0 && t[0] == CuePrefix[0] }
