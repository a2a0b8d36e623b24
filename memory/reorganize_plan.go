package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/recall"
	"troupe/text"
)

// Reorganize (seed 001) tidies what the writers piled up without writing
// anything new. The engine decides everything it can from stored text and
// provenance: which entries are the same fact said again (one's words all
// in the other's), which no live chat supports, what goes first when the
// handbook is over its budget. The scribe is asked one thing only, and only
// about pairs the engine cannot settle: do these two entries state the same
// fact? Its answer names pair numbers; the kept wording is always one of
// the stored entries and the tags are the union of the stored ones, so no
// text or provenance comes from the model.

// entry is a scribe-written handbook line outside the chat blocks.
type entry struct {
	// line is its index in the handbook's lines; text its words without
	// tags; tags the chats it names, in order.
	line    int
	text    string
	tags    []string
	words   []string
	section int
	// joined: other entries were merged into it, so it is written anew.
	joined bool
}

// Sections of the handbook's cross-chat part, in the order budget trimming
// drops from (world facts first; the user's preferences and who the people
// are serve most future chats, as the seed keeps rules, preferences and
// identity facts).
const (
	sectionOther = iota
	sectionWorld
	sectionCharacters
	sectionPreferences
)

// sectionOf names the cross-chat section a heading opens.
func sectionOf(heading string) int {
	for _, lang := range []string{"en", "zh"} {
		h := handbook.CrossHeadings[lang]
		switch {
		case handbook.HeadingMatches(heading, h[0]):
			return sectionCharacters
		case handbook.HeadingMatches(heading, h[1]):
			return sectionWorld
		case handbook.HeadingMatches(heading, h[2]):
			return sectionPreferences
		}
	}
	return sectionOther
}

// words returns the lower-cased words of s (text.Words; each CJK character
// a word of its own), sorted and without repeats.
func words(s string) []string {
	var out []string
	text.Words(s, func(w string) { out = append(out, w) }, func(run []rune) {
		for _, r := range run {
			out = append(out, string(r))
		}
	})
	sort.Strings(out)
	return slices.Compact(out)
}

// contains reports whether every word of small is in big (both sorted).
func contains(big, small []string) bool {
	i := 0
	for _, w := range small {
		for i < len(big) && big[i] < w {
			i++
		}
		if i == len(big) || big[i] != w {
			return false
		}
	}
	return true
}

// Thresholds of sameness. An entry whose words are all in another's says
// nothing the other does not, when it is not much shorter (a bare name is
// in every line about that person: it is not their duplicate). Pairs that
// share at least NearShare of their words without that are the scribe's
// to judge.
const (
	minContainedWords = 3
	minContainedShare = 0.6
	NearShare         = 0.5
	// MaxPairs bounds the pairs one reorganize asks about, which bounds its
	// prompt.
	MaxPairs = 40
)

// restates reports whether entries with word sets a and b say the same
// without a model: equal, or one's words all in the other's, which is not
// much longer.
func restates(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return false
	}
	if len(a) == len(b) {
		return slices.Equal(a, b)
	}
	return len(a) >= minContainedWords && float64(len(a)) >= minContainedShare*float64(len(b)) && contains(b, a)
}

// handbookEntries lists the scribe's entries of a handbook (tagged lines
// outside chat blocks, never a person's hand line).
func handbookEntries(lines []handbook.Line, hand map[string]bool) []entry {
	var out []entry
	section := sectionOther
	for i, l := range lines {
		t := strings.TrimSpace(l.Text)
		if l.Block != "" || t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			section = sectionOf(t)
			continue
		}
		tags := handbook.Tags(t)
		if len(tags) == 0 || hand[handbook.HandLineHash(t)] {
			continue
		}
		body := strings.Join(strings.Fields(handbook.StripTags(t)), " ")
		out = append(out, entry{line: i, text: body, tags: tags, words: words(body), section: section})
	}
	return out
}

// PairKey identifies a pair of entry texts whatever their order, for the
// pairs the scribe judged different (kept so they are not asked again).
func PairKey(a, b string) string {
	a, b = strings.Join(words(a), " "), strings.Join(words(b), " ")
	if a > b {
		a, b = b, a
	}
	sum := sha256.Sum256([]byte(a + "\x00" + b))
	return hex.EncodeToString(sum[:12])
}

// Pair is two entries (their text without tags) the engine could not
// settle.
type Pair struct{ A, B string }

// worded is a text with its words.
type worded struct {
	text  string
	words []string
}

// nearPairs returns the pairs of texts that share NearShare of their words
// without one restating the other, leaving out those in judged, at most
// MaxPairs, most alike first.
func nearPairs(texts []worded, judged map[string]bool, limit int) []Pair {
	type cand struct {
		p Pair
		j float64
	}
	var cs []cand
	for i := range texts {
		for k := i + 1; k < len(texts); k++ {
			a, b := texts[i].text, texts[k].text
			wa, wb := texts[i].words, texts[k].words
			if restates(wa, wb) {
				continue
			}
			j := recall.Overlap(wa, wb)
			if j < NearShare || judged[PairKey(a, b)] {
				continue
			}
			cs = append(cs, cand{Pair{a, b}, j})
		}
	}
	sort.SliceStable(cs, func(i, k int) bool { return cs[i].j > cs[k].j })
	out := make([]Pair, 0, min(len(cs), limit))
	for _, c := range cs[:min(len(cs), limit)] {
		out = append(out, c.p)
	}
	return out
}

// HandbookInput is what a handbook's reorganize is planned from.
type HandbookInput struct {
	Text string
	// Hand is the handbook's stored hand-line set.
	Hand string
	// Live are the chats with a live recap.
	Live map[string]bool
	// MaxChars is the budget of the cross-chat part (the scribe's and the
	// person's lines outside chat blocks, tags included); 0: no budget.
	MaxChars int
	// Same are the pairs the scribe judged to state the same fact.
	Same []Pair
}

// HandbookPlan is a handbook reorganized, with what changed.
type HandbookPlan struct {
	Text string
	// Merged counts entries folded into another; Stale those no live
	// chat supports; Trimmed those dropped for the budget.
	Merged, Stale, Trimmed int
	// Size is the cross-chat part's size after; Over what of it is still
	// past the budget (a person's lines and entries that are the only
	// record of a chat are never dropped for it).
	Size, Over int
}

// HandbookPairs returns the near-duplicate entries of a handbook the
// engine leaves to the scribe: those that remain once the entries that
// restate another are merged, without the pairs in judged.
func HandbookPairs(text, hand string, judged map[string]bool) []Pair {
	lines := handbook.Lines(text)
	es := handbookEntries(lines, handbook.HandLineSet(hand))
	es = mergeEntries(es, nil, nil)
	texts := make([]worded, len(es))
	for i, e := range es {
		texts[i] = worded{e.text, e.words}
	}
	return nearPairs(texts, judged, MaxPairs)
}

// mergeEntries joins entries that restate one another, and those a pair
// of same names: each group keeps the entry with the most words (the
// first of equals) with the union of the group's tags. merged, when set,
// collects the lines of the entries folded away.
func mergeEntries(es []entry, same map[string]bool, merged map[int]bool) []entry {
	groups := groupSame(es, same)
	out := make([]entry, 0, len(groups))
	for _, g := range groups {
		keep := g[0]
		for _, i := range g[1:] {
			if len(es[i].words) > len(es[keep].words) {
				keep = i
			}
		}
		e := es[keep]
		var tags []string
		for _, i := range g {
			tags = append(tags, es[i].tags...)
			if i != keep && merged != nil {
				merged[es[i].line] = true
			}
		}
		e.tags = uniqueSorted(tags)
		e.joined = len(g) > 1
		out = append(out, e)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].line < out[k].line })
	return out
}

// groupSame groups the indexes of entries that restate one another, or
// that a pair of same names, each group in order, groups by first member.
func groupSame(es []entry, same map[string]bool) [][]int {
	parent := make([]int, len(es))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range es {
		for k := i + 1; k < len(es); k++ {
			if restates(es[i].words, es[k].words) || (len(same) > 0 && same[PairKey(es[i].text, es[k].text)]) {
				parent[find(k)] = find(i)
			}
		}
	}
	groups := map[int][]int{}
	var roots []int
	for i := range es {
		r := find(i)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	out := make([][]int, len(roots))
	for i, r := range roots {
		out[i] = groups[r]
	}
	return out
}
func uniqueSorted(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return slices.Compact(out)
}

// entryLine writes an entry back as a handbook line.
func entryLine(e entry) string {
	var b strings.Builder
	b.WriteString(e.text)
	for _, t := range e.tags {
		b.WriteString(" [chat:" + t + "]")
	}
	return b.String()
}

// PlanHandbook reorganizes a handbook without a model, given the pairs the
// scribe judged the same: entries that restate one another (or that it
// judged the same) become one, with the union of their tags; entries no
// live chat supports go; then, while the cross-chat part is over its
// budget, entries go in the seed's order: first those every chat they
// name also holds in its own block (nothing is lost), then those fewer
// chats support, world facts before characters before the user's
// preferences, older before newer. The chat blocks (each chat's own
// record, built from its recap) and a person's lines are never changed,
// and no entry goes for the budget that names a live chat without a block
// here (it may be that chat's only record).
func PlanHandbook(in HandbookInput) HandbookPlan {
	lines := handbook.Lines(in.Text)
	es := handbookEntries(lines, handbook.HandLineSet(in.Hand))
	same := map[string]bool{}
	for _, p := range in.Same {
		same[PairKey(p.A, p.B)] = true
	}
	var plan HandbookPlan
	gone := map[int]bool{}
	es = mergeEntries(es, same, gone)
	plan.Merged = len(gone)
	replace := map[int]string{}
	var kept []entry
	for _, e := range es {
		live := false
		for _, t := range e.tags {
			live = live || in.Live[t]
		}
		if !live {
			gone[e.line] = true
			plan.Stale++
			continue
		}
		if e.joined {
			replace[e.line] = entryLine(e)
		}
		kept = append(kept, e)
	}
	render := func() string {
		out := make([]string, 0, len(lines))
		for i, l := range lines {
			if gone[i] {
				continue
			}
			if r, ok := replace[i]; ok {
				// Keep the line's own indent.
				l.Text = l.Text[:len(l.Text)-len(strings.TrimLeft(l.Text, " \t"))] + r
			}
			out = append(out, l.Text)
		}
		return text.CollapseBlankLines(strings.Join(out, "\n"))
	}
	text := render()
	size := utf8.RuneCountInString(handbook.CrossSections(text))
	if in.MaxChars > 0 && size > in.MaxChars {
		blocks := blockWords(lines)
		order := trimOrder(kept, blocks, in.Live)
		for _, e := range order {
			if size <= in.MaxChars {
				break
			}
			gone[e.line] = true
			plan.Trimmed++
			size -= utf8.RuneCountInString(lines[e.line].Text) + 1
		}
		text = render()
		size = utf8.RuneCountInString(handbook.CrossSections(text))
	}
	plan.Text, plan.Size = text, size
	if in.MaxChars > 0 && size > in.MaxChars {
		plan.Over = size - in.MaxChars
	}
	return plan
}

// blockWords returns, by chat, the word sets of its block's lines.
func blockWords(lines []handbook.Line) map[string][][]string {
	out := map[string][][]string{}
	for _, l := range lines {
		if l.Block != "" {
			out[l.Block] = append(out[l.Block], words(handbook.StripTags(l.Text)))
		}
	}
	return out
}

// trimOrder is the order budget trimming drops entries in (see
// PlanHandbook); entries it may not drop are left out.
func trimOrder(es []entry, blocks map[string][][]string, live map[string]bool) []entry {
	type ranked struct {
		e         entry
		held      bool
		liveChats int
	}
	var rs []ranked
	for _, e := range es {
		r := ranked{e: e, held: true}
		droppable := true
		for _, t := range e.tags {
			if !live[t] {
				continue
			}
			r.liveChats++
			bs, ok := blocks[t]
			if !ok {
				droppable = false
				break
			}
			in := false
			for _, ws := range bs {
				if contains(ws, e.words) {
					in = true
					break
				}
			}
			r.held = r.held && in
		}
		if droppable {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(i, k int) bool {
		a, b := rs[i], rs[k]
		if a.held != b.held {
			return a.held
		}
		if a.liveChats != b.liveChats {
			return a.liveChats < b.liveChats
		}
		if a.e.section != b.e.section {
			return a.e.section < b.e.section
		}
		return a.e.line < b.e.line
	})
	out := make([]entry, len(rs))
	for i, r := range rs {
		out[i] = r.e
	}
	return out
}
