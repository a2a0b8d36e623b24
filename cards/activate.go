package cards

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxRecursion bounds how many times activated entries' text is
// scanned again for keys.
const DefaultMaxRecursion = 3

// Scan is what one turn's activation reads.
type Scan struct {
	// Messages are the chat's latest messages, oldest first.
	Messages []string
	// Character is the speaking character's name, for character filters.
	Character string
	// Budget bounds the inserted entries' tokens; 0 means no bound.
	Budget int
	// Count counts a text's tokens; nil counts a token per four bytes.
	Count func(string) int
	// Rand returns a number in [0, 1) for probabilities and group draws;
	// nil always returns 0 (every roll succeeds, the first weight wins).
	Rand func() float64
	// Expand expands macros in an activated entry's text before it is
	// counted, scanned for recursion and inserted; nil leaves it as is.
	Expand func(string) string
	// MaxRecursion bounds the recursion steps; 0 means
	// DefaultMaxRecursion.
	MaxRecursion int
	// Knows reports whether the speaking character was granted knowledge
	// of an entry restricted to other characters (the recorder's knowledge
	// edges); nil grants nothing. An entry that excludes it by name stays
	// out.
	Knows func(e *Entry) bool
}

// State is what activation keeps per chat between turns.
type State struct {
	// Turn is the turn being played, from 1.
	Turn int `json:"turn"`
	// Timers are the sticky and cooldown ends, by book name and entry uid.
	Timers map[string]Timer `json:"timers,omitempty"`
}

// Timer holds an entry's timed effects, as turn numbers.
type Timer struct {
	// StickyUntil is the last turn the entry stays active without a key.
	StickyUntil int `json:"sticky_until,omitempty"`
	// CooldownUntil is the last turn the entry cannot activate.
	CooldownUntil int `json:"cooldown_until,omitempty"`
}

// Active is an entry to insert.
type Active struct {
	Book  string
	Entry *Entry
	// Content is the entry's text, macros expanded.
	Content string
	Tokens  int
	// rank is the entry's place among all books' entries, for ties.
	rank int
}

// Left is an entry that was called up but is not inserted, and why.
type Left struct {
	Book, UID, Comment string
	Reason             string
}

// Result is a turn's activation.
type Result struct {
	// Entries are the inserted entries in placement order: lower Order
	// first, then book and entry order.
	Entries []Active
	// Left lists the entries left out, with the reason.
	Left []Left
	// State is the chat's state after this turn.
	State State
	// Tokens is what the inserted entries cost.
	Tokens int
}

// candidate is one entry of one book during activation.
type candidate struct {
	book *Book
	e    *Entry
	// sticky: carried over from an earlier turn.
	sticky bool
	// content is the expanded text once activated.
	content string
	tokens  int
}

// activation is one turn's work.
type activation struct {
	sc      Scan
	st      State
	cands   []candidate
	done    []bool // activated or ruled out for this turn
	buffers map[int]*haystack
	res     Result
	used    int
	groups  map[string]bool // groups that have a winner
}

// Activate decides which entries of books the latest messages call up and
// returns them with the state to keep for the next turn. st is the state
// before this turn, with st.Turn already set to this turn's number; it is not
// modified.
func Activate(books []*Book, sc Scan, st State) Result {
	a := &activation{sc: sc, st: st, buffers: map[int]*haystack{}, groups: map[string]bool{}}
	if a.sc.Count == nil {
		a.sc.Count = func(s string) int { return (len(s) + 3) / 4 }
	}
	if a.sc.Rand == nil {
		a.sc.Rand = func() float64 { return 0 }
	}
	if a.sc.MaxRecursion <= 0 {
		a.sc.MaxRecursion = DefaultMaxRecursion
	}
	recursive := false
	for _, b := range books {
		if b == nil {
			continue
		}
		recursive = recursive || b.Recursive
		for i := range b.Entries {
			e := &b.Entries[i]
			if !e.Enabled || e.DontActivate || strings.TrimSpace(e.Content) == "" || !a.passesFilter(e) {
				continue
			}
			a.cands = append(a.cands, candidate{book: b, e: e})
		}
	}
	a.done = make([]bool, len(a.cands))
	recurse := newHaystack("")
	for level := 0; level <= a.sc.MaxRecursion; level++ {
		called := a.callUp(level, recurse)
		if len(called) == 0 {
			break
		}
		kept := a.insert(a.groupWinners(called))
		if !recursive {
			break
		}
		var more strings.Builder
		for _, i := range kept {
			if c := a.cands[i]; c.book.Recursive && !c.e.PreventRecursion {
				more.WriteString("\n")
				more.WriteString(c.content)
			}
		}
		if more.Len() == 0 {
			break
		}
		recurse = newHaystack(recurse.text + more.String())
	}
	a.finish()
	return a.res
}

// passesFilter applies an entry's character filter and known_by.
func (a *activation) passesFilter(e *Entry) bool {
	named := func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.TrimSpace(n), a.sc.Character) })
	}
	if e.FilterExclude && named(e.CharacterFilter) {
		return false
	}
	if (e.KnownBy == nil || named(e.KnownBy)) && (len(e.CharacterFilter) == 0 || named(e.CharacterFilter) != e.FilterExclude) {
		return true
	}
	return a.sc.Knows != nil && a.sc.Knows(e)
}

// callUp returns the candidates this level activates, before groups,
// probability and budget.
func (a *activation) callUp(level int, recurse *haystack) []int {
	var called []int
	for i := range a.cands {
		if a.done[i] {
			continue
		}
		c := &a.cands[i]
		e := c.e
		var t Timer
		if len(a.st.Timers) > 0 {
			t = a.st.Timers[timerKey(c.book.Name, e.UID)]
		}
		if level == 0 && t.StickyUntil >= a.st.Turn && t.StickyUntil > 0 {
			c.sticky = true
			a.done[i] = true
			called = append(called, i)
			continue
		}
		var hit bool
		switch {
		case level == 0 && e.DelayUntilRecursion:
			continue
		case level > 0 && e.ExcludeRecursion:
			continue
		case e.Constant || e.Activate:
			hit = level == 0 || e.DelayUntilRecursion
		case level == 0:
			hit = a.keysMatch(c, a.chat(c))
		case e.DelayUntilRecursion:
			hit = a.keysMatch(c, a.chat(c)) || a.keysMatch(c, recurse)
		default:
			hit = a.keysMatch(c, recurse)
		}
		if !hit {
			continue
		}
		a.done[i] = true
		switch {
		case e.Delay > 0 && a.st.Turn <= e.Delay:
			a.leave(c, "delay: not before turn "+itoa(e.Delay+1))
		case t.CooldownUntil >= a.st.Turn:
			a.leave(c, "cooldown until turn "+itoa(t.CooldownUntil))
		default:
			called = append(called, i)
		}
	}
	return called
}

// chat is the scanned chat text for c's scan depth.
func (a *activation) chat(c *candidate) *haystack {
	depth := c.e.ScanDepth
	if depth < 0 {
		depth = c.book.ScanDepth
		if depth == 0 {
			depth = DefaultScanDepth
		}
	}
	depth = min(depth, len(a.sc.Messages))
	h, ok := a.buffers[depth]
	if !ok {
		h = newHaystack(strings.Join(a.sc.Messages[len(a.sc.Messages)-depth:], "\n"))
		a.buffers[depth] = h
	}
	return h
}

// keysMatch applies c's primary keys and its secondary logic to h.
func (a *activation) keysMatch(c *candidate, h *haystack) bool {
	if h.text == "" {
		return false
	}
	primary, secondary := c.e.primary, c.e.secondary
	if primary == nil {
		primary, secondary, _ = c.e.matchers(c.book)
	}
	if !slices.ContainsFunc(primary, func(m matcher) bool { return a.match(m, h) }) {
		return false
	}
	if !c.e.Selective || len(secondary) == 0 {
		return true
	}
	n := 0
	for _, m := range secondary {
		if a.match(m, h) {
			n++
		}
	}
	switch c.e.Logic {
	case NotAll:
		return n < len(secondary)
	case NotAny:
		return n == 0
	case AndAll:
		return n == len(secondary)
	}
	return n > 0
}

// match applies one key; a key with macros ({{char}}, {{user}}) is
// expanded for this turn first (expandKey).
func (a *activation) match(m matcher, h *haystack) bool {
	if m.macro == "" || a.sc.Expand == nil {
		return m.match(h)
	}
	x, ok := a.expandKey(m)
	return ok && x.match(h)
}

// expandKey compiles the key of m, written with macros, as this turn
// expands them. A macro's value is data, never key syntax: in a
// /pattern/flags key each value is quoted, so that a player named ".*" or
// "a|b" matches only that name, and a literal key stays literal whatever
// its macros give (a name like "/.*/" is no pattern).
func (a *activation) expandKey(m matcher) (matcher, bool) {
	if pattern, flags, ok := regexKey(m.macro); ok {
		x, ok, _ := compileKey("/"+expandQuoted(pattern, a.sc.Expand, regexp.QuoteMeta)+"/"+flags, m.caseSensitive, m.wholeWords)
		return x, ok
	}
	key := strings.TrimSpace(a.sc.Expand(m.macro))
	if key == "" {
		return matcher{}, false
	}
	return compileLiteral(key, m.caseSensitive, m.wholeWords), true
}

// groupWinners keeps one entry per inclusion group: none when the group
// already has one inserted, else the highest priority among those that
// override, else one drawn by weight. Sticky entries keep their place.
func (a *activation) groupWinners(called []int) []int {
	members := map[string][]int{}
	var names []string
	for _, i := range called {
		for _, g := range a.cands[i].e.Groups {
			if members[g] == nil {
				names = append(names, g)
			}
			members[g] = append(members[g], i)
		}
	}
	if len(names) == 0 {
		return called
	}
	slices.Sort(names)
	lost := map[int]string{}
	for _, g := range names {
		var in []int
		for _, i := range members[g] {
			if _, out := lost[i]; !out {
				in = append(in, i)
			}
		}
		if len(in) == 0 {
			continue
		}
		winner := -1
		if !a.groups[g] {
			winner = a.pickWinner(in)
		}
		for _, i := range in {
			if i != winner {
				lost[i] = "inclusion group " + g + " has another entry"
			}
		}
		a.groups[g] = true
	}
	var out []int
	for _, i := range called {
		if why, out2 := lost[i]; out2 {
			a.leave(&a.cands[i], why)
			continue
		}
		out = append(out, i)
	}
	return out
}

// pickWinner chooses a group's entry.
func (a *activation) pickWinner(in []int) int {
	for _, i := range in {
		if a.cands[i].sticky {
			return i
		}
	}
	var over []int
	for _, i := range in {
		if a.cands[i].e.GroupOverride {
			over = append(over, i)
		}
	}
	if len(over) > 0 {
		return slices.MinFunc(over, a.budgetOrder)
	}
	total := 0.0
	for _, i := range in {
		total += a.cands[i].e.GroupWeight
	}
	if total <= 0 {
		return in[0]
	}
	roll := a.sc.Rand() * total
	for _, i := range in {
		if roll -= a.cands[i].e.GroupWeight; roll < 0 {
			return i
		}
	}
	return in[len(in)-1]
}

// budgetOrder ranks entries for the budget: sticky, then constant, then
// higher priority, then earlier.
func (a *activation) budgetOrder(x, y int) int {
	cx, cy := a.cands[x], a.cands[y]
	if cx.sticky != cy.sticky {
		return boolFirst(cx.sticky)
	}
	if cx.e.Constant != cy.e.Constant {
		return boolFirst(cx.e.Constant)
	}
	if d := cmp.Compare(cy.e.Priority, cx.e.Priority); d != 0 {
		return d
	}
	return cmp.Compare(x, y)
}

func boolFirst(x bool) int {
	if x {
		return -1
	}
	return 1
}

// insert rolls probabilities and fits the budget; it returns what was
// inserted.
func (a *activation) insert(called []int) []int {
	slices.SortFunc(called, a.budgetOrder)
	var kept []int
	for _, i := range called {
		c := &a.cands[i]
		e := c.e
		if !c.sticky && e.UseProbability && e.Probability < 100 && a.sc.Rand()*100 >= e.Probability {
			a.leave(c, "probability "+ftoa(e.Probability)+"% not drawn")
			continue
		}
		c.content = strings.TrimSpace(e.Content)
		if a.sc.Expand != nil {
			c.content = strings.TrimSpace(a.sc.Expand(c.content))
		}
		c.tokens = a.sc.Count(c.content)
		if a.sc.Budget > 0 && a.used+c.tokens > a.sc.Budget {
			a.leave(c, "budget: "+itoa(c.tokens)+" tokens, "+itoa(a.sc.Budget-a.used)+" left of "+itoa(a.sc.Budget))
			continue
		}
		a.used += c.tokens
		kept = append(kept, i)
		a.res.Entries = append(a.res.Entries, Active{Book: c.book.Name, Entry: e, Content: c.content, Tokens: c.tokens, rank: i})
	}
	return kept
}

func (a *activation) leave(c *candidate, why string) {
	a.res.Left = append(a.res.Left, Left{Book: c.book.Name, UID: c.e.UID, Comment: c.e.Comment, Reason: why})
}

// finish orders the inserted entries for placement and sets the timers.
func (a *activation) finish() {
	turn := a.st.Turn
	timers := map[string]Timer{}
	for k, t := range a.st.Timers {
		if t.StickyUntil >= turn || t.CooldownUntil >= turn {
			timers[k] = t
		}
	}
	for _, act := range a.res.Entries {
		e := act.Entry
		key := timerKey(act.Book, e.UID)
		if old, ok := timers[key]; ok && old.StickyUntil >= turn {
			continue
		}
		switch {
		case e.Sticky > 0:
			timers[key] = Timer{StickyUntil: turn + e.Sticky, CooldownUntil: cond(e.Cooldown > 0, turn+e.Sticky+e.Cooldown, 0)}
		case e.Cooldown > 0:
			timers[key] = Timer{CooldownUntil: turn + e.Cooldown}
		}
	}
	if len(timers) == 0 {
		timers = nil
	}
	a.res.State = State{Turn: turn, Timers: timers}
	a.res.Tokens = a.used
	slices.SortFunc(a.res.Entries, func(x, y Active) int {
		return cmp.Or(cmp.Compare(x.Entry.Order, y.Entry.Order), cmp.Compare(x.rank, y.rank))
	})
}

// timerKey is where an entry's timers are kept in State.Timers.
func timerKey(book, uid string) string { return book + "/" + uid }

func cond(ok bool, yes, no int) int {
	if ok {
		return yes
	}
	return no
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
