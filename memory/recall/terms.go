package recall

import (
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
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] && len(out) < MaxTerms {
			seen[t] = true
			out = append(out, t)
		}
	}
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 1 {
			add(strings.ToLower(string(word)))
		}
		word = word[:0]
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
			word = append(word, r)
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
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// overlap is the Jaccard similarity of two term sets.
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

func termSet(text string) map[string]bool {
	m := map[string]bool{}
	for _, t := range Terms(text) {
		m[t] = true
	}
	return m
}
