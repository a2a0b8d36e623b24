package text

import (
	"strings"
	"unicode"
)

// IsCJK reports whether r belongs to a script written without spaces
// between words: Han, kana and Hangul.
func IsCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first of these scripts
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// IsHan reports whether r is a Han character: the script Chinese is
// written in, which IsCJK widens to the kana and Hangul. For checks that
// mean Chinese (a language guess), not "written without spaces".
func IsHan(r rune) bool {
	return unicode.Is(unicode.Han, r)
}

// HasCJK reports whether s holds a character IsCJK accepts.
func HasCJK(s string) bool {
	return strings.IndexFunc(s, IsCJK) >= 0
}

// Words splits s the one way every matcher in troupe does: word gets each
// run of letters and digits of an alphabetic script, lower-cased, and run
// each run of CJK characters (IsCJK), in the order they stand. Anything
// else (spaces, punctuation, symbols) ends a run. Either callback may be
// nil. The slice given to run is reused after it returns.
func Words(s string, word func(string), run func([]rune)) {
	var w []rune
	var cjk []rune
	flushWord := func() {
		if len(w) > 0 && word != nil {
			word(string(w))
		}
		w = w[:0]
	}
	flushCJK := func() {
		if len(cjk) > 0 && run != nil {
			run(cjk)
		}
		cjk = cjk[:0]
	}
	for _, r := range s {
		switch {
		case IsCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			w = append(w, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
}

// Bigrams calls add with each overlapping pair of characters of a CJK run,
// or with the run itself when it is one character: the terms such a run
// matches by, since its words are not spaced.
func Bigrams(run []rune, add func(string)) {
	if len(run) == 1 {
		add(string(run))
		return
	}
	for i := 0; i+1 < len(run); i++ {
		add(string(run[i : i+2]))
	}
}
