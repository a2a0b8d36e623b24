package recall

import (
	"strings"
	"unicode"

	"troupe/text"
)

// MaxTermRunes bounds an index term: longer words and names are cut, the
// same way when indexed and when searched, so they still match.
const MaxTermRunes = 64

// CuePrefix marks a cue term: the name of someone or something an item is
// about (or who acted in it), lower-cased, as opposed to a word of its text.
const CuePrefix = "@"

// Keywords are the terms of text worth indexing and searching: Terms
// without the English words too common to tell items apart.
func Keywords(text string) []string {
	ts := Terms(text)
	out := ts[:0]
	for _, t := range ts {
		if !stopwords[t] {
			out = append(out, cut(t))
		}
	}
	return out
}

// Query returns the words (Keywords) and cues (Cues) of text that a recall
// for the character that goes by self (its name and other names) searches
// for. Its own names are neither: every line it said is indexed under its
// name, as the one who acted, so a message that names it — a scene's
// @mention, a question put to it — would make each of those lines relevant
// and fill its recall with what it said in passing. Other names still cue.
func Query(text string, self []string) (words, cues []string) {
	own := map[string]bool{}
	for _, n := range self {
		if c := CueTerm(n); c != "" {
			own[c] = true
		}
		for _, w := range Keywords(n) {
			own[w] = true
		}
	}
	for _, w := range Keywords(text) {
		if !own[w] {
			words = append(words, w)
		}
	}
	for _, c := range Cues(text) {
		if !own[c] {
			cues = append(cues, c)
		}
	}
	return words, cues
}

// CueTerm is the cue term of a name ("" for a blank one).
func CueTerm(name string) string {
	n := strings.Join(strings.Fields(strings.ToLower(name)), " ")
	if n == "" {
		return ""
	}
	return cut(CuePrefix + n)
}

// maxCueWords and maxCueRunes bound the names a message is searched for:
// runs of up to this many words, or CJK runs of up to this many characters.
const (
	maxCueWords = 4
	maxCueRunes = 8
	maxCues     = 400
)

// Cues returns the cue terms a text could name: every run of one to four
// words (lower-cased, as written), and every run of two to eight CJK
// characters, so that a known name anywhere in the text matches the cue an
// item about it was indexed under — without reading the world's names.
func Cues(s string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		c := CueTerm(t)
		if c != "" && !seen[c] && len(out) < maxCues {
			seen[c] = true
			out = append(out, c)
		}
	}
	var words []string
	var cjk []rune
	flush := func() {
		// A name neither ends in a common word nor is one ("the old oak"
		// may start with one): such runs would only cost searches.
		for i := range words {
			for n := 1; n <= maxCueWords && i+n <= len(words); n++ {
				if stopwords[strings.ToLower(words[i+n-1])] {
					continue
				}
				add(strings.Join(words[i:i+n], " "))
			}
		}
		words = words[:0]
	}
	flushCJK := func() {
		for i := range cjk {
			for n := 2; n <= maxCueRunes && i+n <= len(cjk); n++ {
				add(string(cjk[i : i+n]))
			}
		}
		cjk = cjk[:0]
	}
	// Runs are cut at punctuation: "Ask Tess, then go." never makes
	// "tess then", and a sentence boundary never joins a name.
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || r == '\'' || r == '-')
	}) {
		for _, f := range strings.Fields(seg) {
			if strings.IndexFunc(f, text.IsCJK) < 0 {
				words = append(words, f)
				continue
			}
			flush()
			for _, r := range f {
				if text.IsCJK(r) {
					cjk = append(cjk, r)
				} else {
					flushCJK()
				}
			}
			flushCJK()
		}
		flush()
	}
	return out
}

// cut bounds an index term to MaxTermRunes characters.
func cut(t string) string { return text.CutRunes(t, MaxTermRunes) }

// stopwords are English words that say nothing about what an item is
// about; searching for them would only fetch noise.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the is are was were be been being am do does did done doing
		what which who whom whose where when why how me my mine myself you your yours yourself we us our
		he him his she her hers it its they them their this that these those of to in on at by for with from
		into onto about and or but not no nor so if then than there here again ever any anything something
		now please still just very can could would will shall should may might must have has had tell told
		remember know knew recall say said ask asked let let's one ones some all too also as up out
		over after before yes ok okay oh well really i'm it's don't didn't`) {
		m[w] = true
	}
	return m
}()
