package belief

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A belief's "about" holds at most MaxAboutNames names of at most
// MaxNameRunes characters each.
const (
	MaxAboutNames = 8
	MaxNameRunes  = 80
)

// Round is what one character's reflection request showed, and what the
// belief check did before it.
type Round struct {
	// Perceptions are the new perceptions the request showed.
	Perceptions []Perception
	// Beliefs are the character's beliefs as the request showed them (after
	// the belief check was applied).
	Beliefs []Belief
	// Doubted are the beliefs the belief check lowered this round: they are
	// not rewritten, strengthened, lowered again or dropped in this round.
	Doubted []string
	// PivotalImportance is reflection.pivotal_importance: one perception
	// of an event this important, marked pivotal, may found a belief; 0 or
	// less, none may.
	PivotalImportance int
	// NewID mints the id of each belief the round creates (a ULID in the
	// store). Nil numbers them "new-1", "new-2", ….
	NewID func() string
}

// Changes are the accepted, corrected changes of one reflection, ready to be
// installed in one transaction.
type Changes struct {
	// Created are new beliefs in full, merged ones included (MergedFrom set).
	Created []Belief `json:"created,omitempty"`
	// Updated are existing beliefs in full after their change (confidence,
	// evidence, ChangedTurn).
	Updated []Belief `json:"updated,omitempty"`
	// Deleted are the ids of dropped beliefs and of beliefs merged away.
	// Their evidence links and fold marks go with them; a merge's belief
	// takes its sources' evidence over, and Folded names it again.
	Deleted []string `json:"deleted,omitempty"`
	// Folded are the perceptions this round folded into a belief: the
	// support links it wrote.
	Folded []Fold `json:"folded,omitempty"`
}

// Fold says a perception is now folded into a belief: recall prefers the
// belief and the perception fades by memory.folded_fade.
type Fold struct {
	Perception string `json:"perception"`
	Belief     string `json:"belief"`
}

// Empty reports whether the round changes nothing.
func (c Changes) Empty() bool {
	return len(c.Created) == 0 && len(c.Updated) == 0 && len(c.Deleted) == 0
}

// Validate enforces the evidence rules on an answer, item by item. It
// returns the accepted changes, corrected where a rule allows it, and one
// note for every item that was corrected, dropped or refused. A bad item
// never spoils the others. The order of work is add, strengthen, doubt,
// merge, drop; the first item that changes a belief wins it.
func Validate(r Round, a Answer) (Changes, []Note) {
	v := newValidator(r)
	for _, m := range a.Malformed {
		v.notes = append(v.notes, Note{Item: m, Action: Dropped, Reason: ReasonMalformed})
	}
	for i, x := range a.Add {
		v.add(i, x)
	}
	for i, x := range a.Strengthen {
		v.strengthen(i, x)
	}
	for i, x := range a.Doubt {
		v.doubt(i, x)
	}
	for i, x := range a.Merge {
		v.merge(i, x)
	}
	for i, x := range a.Drop {
		v.drop(i, x)
	}
	return v.ch, v.notes
}

type validator struct {
	r        Round
	percs    map[string]Perception
	beliefs  map[string]Belief
	doubted  map[string]bool
	touched  map[string]bool
	shownIDs map[string]bool
	pivotal  int
	minted   int
	ch       Changes
	notes    []Note
}

func newValidator(r Round) *validator {
	v := &validator{
		r:        r,
		percs:    map[string]Perception{},
		beliefs:  map[string]Belief{},
		doubted:  map[string]bool{},
		touched:  map[string]bool{},
		shownIDs: map[string]bool{},
		pivotal:  r.PivotalImportance,
	}
	for _, p := range r.Perceptions {
		v.percs[p.ID] = p
		v.shownIDs[p.ID] = true
	}
	for _, b := range r.Beliefs {
		v.beliefs[b.ID] = b
		v.shownIDs[b.ID] = true
	}
	for _, id := range r.Doubted {
		v.doubted[id] = true
	}
	return v
}

// item collects an item's corrections until it is accepted or dropped, so
// a dropped item leaves one note, not a correction and a drop.
type item struct {
	v       *validator
	name    string
	belief  string
	pending []Note
}

func (v *validator) item(kind string, i int) *item {
	return &item{v: v, name: kind + "[" + strconv.Itoa(i) + "]"}
}

func (it *item) correct(r Reason, detail string) {
	it.pending = append(it.pending, Note{Item: it.name, Belief: it.belief, Action: Corrected, Reason: r, Detail: detail})
}

func (it *item) fail(a Action, r Reason, detail string) {
	it.v.notes = append(it.v.notes, Note{Item: it.name, Belief: it.belief, Action: a, Reason: r, Detail: detail})
}

func (it *item) failNote(n Note) {
	n.Item, n.Belief = it.name, it.belief
	it.v.notes = append(it.v.notes, n)
}

func (it *item) accept() { it.v.notes = append(it.v.notes, it.pending...) }

// cite keeps the shown perceptions among ids, once each, in the given order;
// the others are removed with a correction.
func (v *validator) cite(it *item, ids []string) []Perception {
	var out []Perception
	var unknown []string
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if p, ok := v.percs[id]; ok {
			out = append(out, p)
		} else {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		it.correct(ReasonUnknownPerc, countOf(len(unknown)))
	}
	return out
}

// target finds the belief an item changes; false (noted) when it does not
// exist, was doubted by the check this round or is changed by an earlier item.
func (v *validator) target(it *item, id string) (Belief, bool) {
	b, ok := v.beliefs[id]
	if ok {
		it.belief = id
	}
	switch {
	case !ok:
		it.fail(Dropped, ReasonUnknownBelief, "")
	case v.doubted[id]:
		it.fail(Dropped, ReasonDoubtedThisRound, "")
	case v.touched[id]:
		it.fail(Dropped, ReasonAlreadyChanged, "")
	default:
		return b.clone(), true
	}
	return Belief{}, false
}

// newer keeps the perceptions newer than b; the others are noted.
func newer(it *item, b Belief, ps []Perception) []Perception {
	var out []Perception
	var old []string
	for _, p := range ps {
		if p.Turn > b.ChangedTurn {
			out = append(out, p)
		} else {
			old = append(old, p.ID)
		}
	}
	if len(old) > 0 && len(out) > 0 {
		it.correct(ReasonNotNewer, idList(old))
	}
	return out
}

func (v *validator) add(i int, a Add) {
	it := v.item("add", i)
	if n, bad := checkText(it.name, a.Text, v.shownIDs); bad {
		it.failNote(n)
		return
	}
	sup := v.cite(it, a.Supports)
	if len(sup) == 0 {
		it.fail(Dropped, ReasonNoPerception, "supports")
		return
	}
	against := v.notIn(it, v.cite(it, a.Against), sup)
	turns := distinctTurns(sup)
	if turns < 2 && !v.pivotalIn(sup) {
		it.fail(Dropped, ReasonSingleMoment, "")
		return
	}
	conf := Likely
	if strings.TrimSpace(a.Confidence) != "" {
		c, err := ParseConfidence(a.Confidence)
		if err != nil {
			it.correct(ReasonBadConfidence, "")
		} else {
			conf = c
		}
	}
	if conf == Sure && turns < 2 {
		it.correct(ReasonSureOneTurn, "")
		conf = Likely
	}
	b := Belief{ID: v.newID(), Text: strings.TrimSpace(a.Text), Confidence: conf, About: names(it, a.About)}
	if len(b.About) == 0 {
		for _, p := range sup {
			b.About = appendNew(b.About, p.About...)
		}
	}
	b.Evidence = link(nil, sup, Supports)
	b.Evidence = link(b.Evidence, against, Contradicts)
	b.FormedTurn = max(maxTurn(sup), maxTurn(against))
	b.ChangedTurn = b.FormedTurn
	v.ch.Created = append(v.ch.Created, b)
	v.fold(b.ID, sup)
	it.accept()
}

func (v *validator) strengthen(i int, s Strengthen) {
	it := v.item("strengthen", i)
	b, sup, ok := v.shift(it, s.Belief, shift{stance: Supports, cites: s.Supports,
		none: ReasonNoPerception, noneDetail: "supports", linked: ReasonNoNewSupport})
	if !ok {
		return
	}
	b.Confidence = b.Confidence.Up()
	v.update(b)
	v.fold(b.ID, sup)
	it.accept()
}

func (v *validator) doubt(i int, d Doubt) {
	it := v.item("doubt", i)
	b, _, ok := v.shift(it, d.Belief, shift{stance: Contradicts, cites: d.Against,
		none: ReasonNoContradiction, linked: ReasonRecorded})
	if !ok {
		return
	}
	b.Confidence = b.Confidence.Down()
	v.update(b)
	it.accept()
}

// shift is a strengthen or a doubt of one belief: the perceptions it cites
// with its stance, and the reasons it is dropped for when none is cited or
// every one is linked with that stance already.
type shift struct {
	stance     Stance
	cites      []string
	none       Reason
	noneDetail string
	linked     Reason
}

// shift links to the belief id the cited perceptions that are shown, newer
// than it and not yet linked with s's stance, and moves its changed turn;
// the caller moves its confidence. ok is false when the item was dropped.
func (v *validator) shift(it *item, id string, s shift) (b Belief, ps []Perception, ok bool) {
	if b, ok = v.target(it, id); !ok {
		return b, nil, false
	}
	if ps = v.cite(it, s.cites); len(ps) == 0 {
		it.fail(Dropped, s.none, s.noneDetail)
		return b, nil, false
	}
	if ps = newer(it, b, ps); len(ps) == 0 {
		it.fail(Dropped, ReasonNotNewer, "")
		return b, nil, false
	}
	if ps = v.unlinked(it, b, ps, s.stance); len(ps) == 0 {
		it.fail(Dropped, s.linked, "")
		return b, nil, false
	}
	b.Evidence = link(b.Evidence, ps, s.stance)
	b.ChangedTurn = max(b.ChangedTurn, maxTurn(ps))
	return b, ps, true
}

func (v *validator) merge(i int, m Merge) {
	it := v.item("merge", i)
	var srcs []Belief
	var unknown []string
	for _, id := range uniq(m.Beliefs) {
		b, ok := v.beliefs[id]
		switch {
		case !ok:
			unknown = append(unknown, id)
			continue
		case v.doubted[id]:
			it.belief = id
			it.fail(Dropped, ReasonDoubtedThisRound, "")
			return
		case v.touched[id]:
			it.belief = id
			it.fail(Dropped, ReasonAlreadyChanged, "")
			return
		}
		srcs = append(srcs, b)
	}
	if len(unknown) > 0 {
		it.correct(ReasonUnknownBelief, countOf(len(unknown)))
	}
	if len(srcs) < 2 {
		it.fail(Dropped, ReasonMergeNeedsTwo, "")
		return
	}
	if n, bad := checkText(it.name, m.Text, v.shownIDs); bad {
		it.failNote(n)
		return
	}
	sup := v.cite(it, m.Supports)
	top := Doubtful
	b := Belief{ID: v.newID(), Text: strings.TrimSpace(m.Text), FormedTurn: srcs[0].FormedTurn}
	for _, s := range srcs {
		top = max(top, s.Confidence)
		b.About = appendNew(b.About, s.About...)
		b.FormedTurn = min(b.FormedTurn, s.FormedTurn)
		b.ChangedTurn = max(b.ChangedTurn, s.ChangedTurn)
		for _, e := range s.Evidence {
			if !b.links(e.Perception, e.Stance) {
				b.Evidence = append(b.Evidence, e)
			}
		}
		b.MergedFrom = append(b.MergedFrom, s.ID)
	}
	if len(b.About) > MaxAboutNames {
		b.About = b.About[:MaxAboutNames]
	}
	b.Confidence = top
	if strings.TrimSpace(m.Confidence) != "" {
		switch c, err := ParseConfidence(m.Confidence); {
		case err != nil:
			it.correct(ReasonBadConfidence, "")
		case c > top:
			it.correct(ReasonMergeAbove, "")
		default:
			b.Confidence = c
		}
	}
	for _, p := range sup {
		if !b.links(p.ID, Supports) {
			b.Evidence = append(b.Evidence, Evidence{Perception: p.ID, Turn: p.Turn, Stance: Supports})
		}
	}
	b.ChangedTurn = max(b.ChangedTurn, maxTurn(sup))
	if b.Confidence == Sure && b.supportTurns() < 2 {
		it.correct(ReasonSureOneTurn, "")
		b.Confidence = Likely
	}
	for _, s := range srcs {
		v.touched[s.ID] = true
		v.ch.Deleted = append(v.ch.Deleted, s.ID)
	}
	v.ch.Created = append(v.ch.Created, b)
	for _, e := range b.Evidence {
		if e.Stance == Supports {
			v.ch.Folded = append(v.ch.Folded, Fold{Perception: e.Perception, Belief: b.ID})
		}
	}
	it.accept()
}

func (v *validator) drop(i int, d Drop) {
	it := v.item("drop", i)
	b, ok := v.target(it, d.Belief)
	if !ok {
		return
	}
	because := v.cite(it, d.Because)
	if len(because) == 0 {
		it.fail(Dropped, ReasonNoPerception, "because")
		return
	}
	if because = newer(it, b, because); len(because) == 0 {
		it.fail(Dropped, ReasonNotNewer, "")
		return
	}
	v.touched[b.ID] = true
	v.ch.Deleted = append(v.ch.Deleted, b.ID)
	it.accept()
}

// unlinked keeps the perceptions b is not yet linked to with stance s, nor
// linked to with the opposite stance (a perception is not for and against).
func (v *validator) unlinked(it *item, b Belief, ps []Perception, s Stance) []Perception {
	other := Contradicts
	if s == Contradicts {
		other = Supports
	}
	var out []Perception
	var both []string
	for _, p := range ps {
		switch {
		case b.links(p.ID, s):
		case b.links(p.ID, other):
			both = append(both, p.ID)
		default:
			out = append(out, p)
		}
	}
	if len(both) > 0 && len(out) > 0 {
		it.correct(ReasonBothSides, idList(both))
	}
	return out
}

// notIn removes from ps those also in keep, noting it.
func (v *validator) notIn(it *item, ps, keep []Perception) []Perception {
	var out []Perception
	var both []string
	for _, p := range ps {
		if slices.ContainsFunc(keep, func(k Perception) bool { return k.ID == p.ID }) {
			both = append(both, p.ID)
		} else {
			out = append(out, p)
		}
	}
	if len(both) > 0 {
		it.correct(ReasonBothSides, idList(both))
	}
	return out
}

func (v *validator) pivotalIn(ps []Perception) bool {
	if v.pivotal <= 0 {
		return false
	}
	for _, p := range ps {
		if p.Pivotal && p.Importance >= v.pivotal {
			return true
		}
	}
	return false
}

// update records b's new state; later items see it.
func (v *validator) update(b Belief) {
	v.touched[b.ID] = true
	v.beliefs[b.ID] = b
	v.ch.Updated = append(v.ch.Updated, b)
}

func (v *validator) fold(belief string, ps []Perception) {
	for _, p := range ps {
		v.ch.Folded = append(v.ch.Folded, Fold{Perception: p.ID, Belief: belief})
	}
}

func (v *validator) newID() string {
	if v.r.NewID != nil {
		return v.r.NewID()
	}
	v.minted++
	return "new-" + strconv.Itoa(v.minted)
}

func link(ev []Evidence, ps []Perception, s Stance) []Evidence {
	for _, p := range ps {
		ev = append(ev, Evidence{Perception: p.ID, Turn: p.Turn, Stance: s})
	}
	return ev
}

func distinctTurns(ps []Perception) int {
	turns := map[int64]bool{}
	for _, p := range ps {
		turns[p.Turn] = true
	}
	return len(turns)
}

func maxTurn(ps []Perception) int64 {
	var m int64
	for _, p := range ps {
		m = max(m, p.Turn)
	}
	return m
}

// names cleans the names of an "about": spaces folded, each once, at most
// MaxAboutNames of at most MaxNameRunes characters; the rest is removed
// with a correction.
func names(it *item, in []string) []string {
	var out []string
	cut := 0
	for _, n := range in {
		n = strings.Join(strings.Fields(n), " ")
		switch {
		case n == "":
		case utf8.RuneCountInString(n) > MaxNameRunes || len(out) == MaxAboutNames:
			cut++
		default:
			out = appendNew(out, n)
		}
	}
	if cut > 0 {
		it.correct(ReasonAboutCut, countOf(cut))
	}
	return out
}

// appendNew appends the names not yet in list (ignoring case).
func appendNew(list []string, add ...string) []string {
	for _, n := range add {
		if !slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, n) }) {
			list = append(list, n)
		}
	}
	return list
}

func uniq(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func idList(ids []string) string { return strings.Join(ids, ", ") }

func itoa(n int) string { return fmt.Sprint(n) }

// countOf describes ids the model wrote that match nothing: they are the
// model's text, so a note gives their number, never them.
func countOf(n int) string {
	if n == 1 {
		return "1 id"
	}
	return itoa(n) + " ids"
}
