package belief

import (
	"cmp"
	"slices"
	"sort"
)

// CorpusOf counts what SelectChecks and PromptBeliefs count when
// in.Corpus is nil: the new perceptions, the beliefs and the known
// perceptions not among the new. A caller that asks both of the same
// perceptions and of beliefs with the same texts counts them once with it
// (reading the known perceptions' words is most of their work).
func CorpusOf(in CheckInput) *Corpus {
	if in.Corpus != nil {
		return in.Corpus
	}
	c := NewCorpus()
	for _, p := range in.New {
		c.Add(p.Text, p.About)
	}
	for _, b := range in.Beliefs {
		c.Add(b.Text, b.About)
	}
	c.addKnown(in)
	return c
}

// addKnown counts in.Known, but for the perceptions also in in.New.
func (c *Corpus) addKnown(in CheckInput) {
	isNew := make(map[string]bool, len(in.New))
	for _, p := range in.New {
		isNew[p.ID] = true
	}
	for _, p := range in.Known {
		if !isNew[p.ID] {
			c.Add(p.Text, p.About)
		}
	}
}

// scored is one belief, the new perceptions related to it and how much.
type scored struct {
	check Check
	score float64
}

// relate scores every belief against the new perceptions, most related
// first (then by id). newerOnly counts only perceptions newer than the
// belief's last change, as a check needs. A term's weight is worked out
// once, and a belief meets only the perceptions that hold its terms (an
// index of them), not every perception: a round relates some hundred
// beliefs to sixty perceptions several times (checks, and each size a
// request is tried at), and pairing them all was a tenth of troupe's CPU
// in troupe bench's stream.
func relate(in CheckInput, newerOnly bool) []scored {
	if len(in.New) == 0 {
		return nil
	}
	c := in.Corpus
	if c == nil {
		c = NewCorpus()
	}
	newWords := make([]map[string]bool, len(in.New))
	newAbout := make([]map[string]bool, len(in.New))
	for i, p := range in.New {
		newWords[i], newAbout[i] = c.termsOf(p.Text), c.aboutOf(p.About)
	}
	beliefWords := make([]map[string]bool, len(in.Beliefs))
	beliefAbout := make([]map[string]bool, len(in.Beliefs))
	for i, b := range in.Beliefs {
		beliefWords[i], beliefAbout[i] = c.termsOf(b.Text), c.aboutOf(b.About)
	}
	if in.Corpus == nil {
		for i := range in.New {
			c.count(newWords[i], newAbout[i])
		}
		for i := range in.Beliefs {
			c.count(beliefWords[i], beliefAbout[i])
		}
		c.addKnown(in)
	}
	words := rarity{df: c.Words, n: c.Docs}
	about := rarity{df: c.Names, n: c.Docs}
	if len(in.New) >= 2 {
		words.shared = inAll(newWords)
		about.shared = inAll(newAbout)
	}
	wordIdx, aboutIdx := postings(words, newWords, 1), postings(about, newAbout, aboutWeight)
	score := make([]float64, len(in.New))
	cands := make([]scored, len(in.Beliefs))
	for ci, b := range in.Beliefs {
		cands[ci].check.Belief = b
		clear(score)
		for _, idx := range []struct {
			terms map[string]bool
			index map[string]posting
		}{{beliefWords[ci], wordIdx}, {beliefAbout[ci], aboutIdx}} {
			for t := range idx.terms {
				if post, ok := idx.index[t]; ok {
					for _, i := range post.in {
						score[i] += post.weight
					}
				}
			}
		}
		type rel struct {
			p     Perception
			score float64
		}
		var rels []rel
		for i, p := range in.New {
			if newerOnly && p.Turn <= b.ChangedTurn {
				continue
			}
			if score[i] > 0 {
				rels = append(rels, rel{p, score[i]})
			}
		}
		sort.SliceStable(rels, func(i, j int) bool { return rels[i].score > rels[j].score })
		if len(rels) > MaxCheckPerceptions {
			rels = rels[:MaxCheckPerceptions]
		}
		for _, r := range rels {
			cands[ci].score += r.score
			cands[ci].check.Perceptions = append(cands[ci].check.Perceptions, r.p)
		}
		slices.SortStableFunc(cands[ci].check.Perceptions, func(a, b Perception) int {
			return cmp.Compare(a.Turn, b.Turn)
		})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].check.Belief.ID < cands[j].check.Belief.ID
	})
	return cands
}

// posting is a term's weight (times a factor) and the new perceptions that
// hold it.
type posting struct {
	weight float64
	in     []int
}

// postings indexes the terms of sets that weigh something by r.
func postings(r rarity, sets []map[string]bool, factor float64) map[string]posting {
	out := map[string]posting{}
	for i, set := range sets {
		for t := range set {
			p, ok := out[t]
			if !ok {
				p.weight = factor * r.weight(t)
			}
			if p.weight > 0 {
				p.in = append(p.in, i)
			}
			out[t] = p
		}
	}
	for t, p := range out {
		if p.weight <= 0 {
			delete(out, t)
		}
	}
	return out
}

// DefaultPromptBeliefs is how many beliefs one reflection request shows at
// most, and DefaultPromptPerceptions how many new perceptions: a request
// stays the same size however long the story runs.
const (
	DefaultPromptBeliefs     = 40
	DefaultPromptPerceptions = 60
)

// PromptBeliefs picks the beliefs a reflection request shows, at most limit
// (0: DefaultPromptBeliefs): those related to the new perceptions first,
// most related first, then the most recently changed. They come back in
// their given order. A belief not shown cannot be changed this round.
func PromptBeliefs(in CheckInput, limit int) []Belief {
	if limit <= 0 {
		limit = DefaultPromptBeliefs
	}
	if len(in.Beliefs) <= limit {
		return in.Beliefs
	}
	picked := map[string]bool{}
	for _, c := range relate(in, false) {
		if c.score <= 0 || len(picked) == limit {
			break
		}
		picked[c.check.Belief.ID] = true
	}
	rest := slices.Clone(in.Beliefs)
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].ChangedTurn > rest[j].ChangedTurn })
	for _, b := range rest {
		if len(picked) == limit {
			break
		}
		picked[b.ID] = true
	}
	var out []Belief
	for _, b := range in.Beliefs {
		if picked[b.ID] {
			out = append(out, b)
		}
	}
	return out
}

// Batch picks the new perceptions one reflection request shows: the oldest
// limit of them (0: DefaultPromptPerceptions), in turn order. The others stay
// new for the next run.
func Batch(ps []Perception, limit int) []Perception {
	if limit <= 0 {
		limit = DefaultPromptPerceptions
	}
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Perception) int {
		return cmp.Compare(a.Turn, b.Turn)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
