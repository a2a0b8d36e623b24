package eval

import (
	"strings"
	"unicode"

	"troupe/text"
)

// Verdict is how one reply scored.
type Verdict struct {
	Score float64 `json:"score"`
	// Why names what decided it: the gold answer found, the forbidden
	// answer that appeared, or the best F1.
	Why string `json:"why"`
}

// Score grades reply against a case's gold and forbidden answers. A
// forbidden answer in the reply scores 0 in every category. In the
// categories where the character must not tell (abstention, perspective,
// forgetting) the reply then scores 1, unless the case also names gold
// answers (what it must still know: another chat's fact beside a forgotten
// one); elsewhere, and there, it needs a gold answer, contained in it or
// matched with character-level F1 ≥ f1.
func Score(c Case, reply string, f1 float64) Verdict {
	norm := Normalize(reply)
	for _, f := range c.Forbidden {
		if containsTerm(norm, Normalize(f)) {
			return Verdict{Score: 0, Why: "forbidden: " + f}
		}
	}
	if MustNotTell(c.Category) && len(c.Gold) == 0 {
		return Verdict{Score: 1, Why: "no forbidden answer"}
	}
	best := 0.0
	for _, g := range c.Gold {
		ng := Normalize(g)
		if containsTerm(norm, ng) {
			return Verdict{Score: 1, Why: "gold: " + g}
		}
		best = max(best, CharF1(norm, ng))
	}
	if f1 > 0 && best >= f1 {
		return Verdict{Score: 1, Why: "gold by F1"}
	}
	return Verdict{Score: 0, Why: "no gold answer"}
}

// Normalize folds text for comparison: full-width forms to half-width,
// lower case, punctuation and symbols (Chinese and English) to spaces, runs
// of space to one.
func Normalize(s string) string {
	var b strings.Builder
	space := true
	for _, r := range s {
		switch {
		case r == 0x3000:
			r = ' '
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		}
		r = unicode.ToLower(r)
		if unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(r)
		space = false
	}
	return strings.TrimSpace(b.String())
}

// containsTerm reports whether the normalized text holds the normalized
// term; a term that starts or ends with a letter or digit of an alphabetic
// script must stand as whole words ("owl" is not in "bowl").
func containsTerm(text, term string) bool {
	if term == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], term)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(term)
		if boundary(text, start, term, true) && boundary(text, end, term, false) {
			return true
		}
		i = start + 1
	}
}

func boundary(text string, at int, term string, before bool) bool {
	var edge, next rune
	if before {
		edge = []rune(term)[0]
		if at == 0 {
			return true
		}
		next = []rune(text[:at])[len([]rune(text[:at]))-1]
	} else {
		r := []rune(term)
		edge = r[len(r)-1]
		if at >= len(text) {
			return true
		}
		next = []rune(text[at:])[0]
	}
	if !wordRune(edge) {
		return true
	}
	return !wordRune(next)
}

// wordRune is a letter or digit of a script written with spaces between
// words.
func wordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !text.IsHan(r)
}

// CharF1 is the F1 of the characters (spaces left out) two normalized
// texts share, counted with multiplicity.
func CharF1(a, b string) float64 {
	count := func(s string) (map[rune]int, int) {
		m, n := map[rune]int{}, 0
		for _, r := range s {
			if r != ' ' {
				m[r]++
				n++
			}
		}
		return m, n
	}
	ca, na := count(a)
	cb, nb := count(b)
	if na == 0 || nb == 0 {
		return 0
	}
	common := 0
	for r, n := range ca {
		common += min(n, cb[r])
	}
	if common == 0 {
		return 0
	}
	p, r := float64(common)/float64(na), float64(common)/float64(nb)
	return 2 * p * r / (p + r)
}
