package recall

import (
	"slices"
	"strings"
	"unicode"
)

// MaxTerms bounds the terms taken from one text.
const MaxTerms = 256

// Terms returns the distinct index terms of text, in order of first
// appearance: lower-cased words of letters and digits for alphabetic
// scripts, and overlapping character bigrams for runs of CJK characters (a
// run of one character is its own term). Words of one letter are left out.
func Terms(text string) []string {
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
	var word strings.Builder
	words := 0 // runes in word
	var cjk []rune
	flushWord := func() {
		if words > 1 {
			add(word.String())
		}
		word.Reset()
		words = 0
	}
	flushCJK := func() {
		switch {
		case len(cjk) == 1:
			add(string(cjk))
		case len(cjk) > 1:
			for i := 0; i+1 < len(cjk); i++ {
				add(string(cjk[i : i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word.WriteRune(unicode.ToLower(r))
			words++
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// isCJK reports whether r is written without spaces between words: Han,
// kana and Hangul.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first of these scripts
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// overlap is the Jaccard similarity of two term sets (termSet's sorted
// slices): one merge, no map.
func overlap(a, b []string) float64 {
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
