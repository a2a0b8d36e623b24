package belief

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"troupe/text"
)

// stopWords are English function words, too common to relate anything even
// in the small collections rarity is counted over.
var stopWords = wordSet(`a an the and or but if of to in on at by for with from into onto
	is are was were be been being am do does did has have had not no so as than then that this these those
	it its he him his she her hers they them their we us our you your i me my mine who whom whose what which
	there here when where why how all any some very just also too up down out over again about`)

func wordSet(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

// terms are a text's words for matching: lowered letter-and-digit runs of
// alphabetic scripts, and character bigrams of CJK runs (a lone CJK
// character counts as itself), each once.
func terms(s string) map[string]bool {
	out := map[string]bool{}
	text.Words(s, func(w string) {
		if utf8.RuneCountInString(w) >= 2 && !stopWords[w] {
			out[w] = true
		}
	}, func(run []rune) {
		text.Bigrams(run, func(t string) { out[t] = true })
	})
	return out
}

// Corpus counts, over a character's texts (its perceptions and beliefs), in
// how many each word and each name of "about" occurs: what relates a belief
// to a perception is what few of them share. A caller may keep one per
// character instead of passing every perception to SelectChecks.
type Corpus struct {
	Docs  int            `json:"docs"`
	Words map[string]int `json:"words"`
	Names map[string]int `json:"names"`

	// memo keeps the term sets of the texts and names it was asked of: a
	// round asks of the same ones several times. Callers treat the sets
	// as read-only.
	mu    sync.Mutex
	memo  map[string]map[string]bool
	names map[string]map[string]bool
}

// termsOf is terms(text), kept.
func (c *Corpus) termsOf(text string) map[string]bool {
	return c.kept(&c.memo, text, func() map[string]bool { return terms(text) })
}

// aboutOf is aboutSet(about), kept.
func (c *Corpus) aboutOf(about []string) map[string]bool {
	return c.kept(&c.names, strings.Join(about, "\x00"), func() map[string]bool { return aboutSet(about) })
}

// kept returns the set memo keeps under key, making it first.
func (c *Corpus) kept(memo *map[string]map[string]bool, key string, build func() map[string]bool) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if set, ok := (*memo)[key]; ok {
		return set
	}
	if *memo == nil {
		*memo = map[string]map[string]bool{}
	}
	set := build()
	(*memo)[key] = set
	return set
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus {
	return &Corpus{Words: map[string]int{}, Names: map[string]int{}}
}

// Add counts one text and the names it is about.
func (c *Corpus) Add(text string, about []string) {
	c.count(c.termsOf(text), c.aboutOf(about))
}

func (c *Corpus) count(words, names map[string]bool) {
	c.Docs++
	for t := range words {
		c.Words[t]++
	}
	for n := range names {
		c.Names[n]++
	}
}

// Terms returns a text's matching terms, sorted: lowered words of
// alphabetic scripts (without English function words) and CJK character
// bigrams. An index built with them agrees with SelectChecks.
func Terms(text string) []string {
	out := make([]string, 0, 8)
	for t := range terms(text) {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// rarity weighs terms by how few of a character's texts hold them.
type rarity struct {
	df     map[string]int
	n      int
	shared map[string]bool // in every new perception: says nothing
}

// weight is 0 for a term too common to relate two texts, else its inverse
// document frequency: a term is rare when at most a third of the texts
// (and never fewer than two) hold it.
func (r rarity) weight(t string) float64 {
	df := r.df[t]
	if df == 0 || r.shared[t] || df > max(2, r.n/3) {
		return 0
	}
	return math.Log(1 + float64(r.n)/float64(df))
}
