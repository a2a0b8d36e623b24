package recall

import (
	"slices"
	"unicode/utf8"

	"troupe/text"
)

// MaxTerms bounds the terms taken from one text.
const MaxTerms = 256

// Terms returns the distinct index terms of text, in order of first
// appearance: lower-cased words of letters and digits for alphabetic
// scripts, and overlapping character bigrams for runs of CJK characters (a
// run of one character is its own term). Words of one letter are left out.
func Terms(s string) []string {
	var out []string
	// Texts have few terms: a linear look for a repeat is cheaper than a
	// map, up to the size where a map pays off.
	var seen map[string]bool
	add := func(t string) {
		if t == "" || len(out) >= MaxTerms {
			return
		}
		if seen == nil && len(out) >= 32 {
			seen = make(map[string]bool, 2*len(out))
			for _, o := range out {
				seen[o] = true
			}
		}
		if seen != nil {
			if seen[t] {
				return
			}
			seen[t] = true
		} else if slices.Contains(out, t) {
			return
		}
		out = append(out, t)
	}
	text.Words(s, func(w string) {
		if utf8.RuneCountInString(w) > 1 {
			add(w)
		}
	}, func(run []rune) { text.Bigrams(run, add) })
	return out
}

// Overlap is the Jaccard similarity of two sorted sets of distinct terms
// (termSet's, or any such slices): one merge, no map.
func Overlap(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

// termSet is the distinct terms of text, sorted, for overlap.
func termSet(text string) []string {
	ts := Terms(text)
	slices.Sort(ts)
	return ts
}
