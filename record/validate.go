package record

import (
	"fmt"
	"strings"
)

// Limits on the recorder's texts.
const (
	MaxTextRunes        = 500
	MaxGistRunes        = 200
	MaxNameRunes        = 100
	MaxAbout            = 12
	MaxDescriptionRunes = 300
)

// Drop is an item of the answer that broke a rule. Its reason names the
// section, the item and the rule, never the story's words, so it can be
// stored and shown where /forget does not reach.
type Drop struct {
	Section string
	Index   int
	Reason  string
}

func (d Drop) String() string { return fmt.Sprintf("%s[%d]: %s", d.Section, d.Index, d.Reason) }

// Record is what a validated answer installs: the items that passed, the
// perceptions every present cast member ends up with, and what was dropped.
type Record struct {
	Turns         []TurnInfo
	Events        []EventInfo
	Changes       []ChangeInfo
	Perceptions   []Perception
	Threads       []ThreadOp
	Ledger        *Ledger
	Entities      []Entity
	Relationships []Relationship
	Knowledge     []Knowledge
	Drops         []Drop
}

// Validate checks the answer against the batch item by item: ids it cites
// were shown; perceptions only for cast members present at the event, or
// told with the telling event in via, spoken by one who witnessed the event
// to an audience that included the listener; relationships, and knowledge
// of an entity new in the answer, only for a character that perceived
// every event of the batch (see Witnessed): their texts are the model's,
// written from all of it; importance 1–10; story time never runs
// backwards; texts within limits. A bad item is dropped with its
// reason; the rest stands. The perceptions of the result are complete: the
// default of every present cast member, replaced by the model's where it
// differs.
func Validate(in Input, a Answer) Record {
	v := validator{in: in, events: in.events(), turns: in.turns(), cast: in.cast(), known: map[string]bool{}, fresh: map[string]bool{}}
	for _, e := range in.Entities {
		v.known[strings.ToLower(e.Name)] = true
	}
	v.turnsOf(a.Turns)
	v.eventsOf(a.Events)
	v.changesOf(a.Changes)
	v.entitiesOf(a.Entities)
	v.perceptionsOf(a.Perceptions)
	v.threadsOf(a.Threads)
	v.ledgerOf(a.Ledger)
	v.relationshipsOf(a.Relationships)
	v.knowledgeOf(a.Knowledge)
	v.out.Perceptions = Perceive(in, v.out.Perceptions)
	return v.out
}

type validator struct {
	in     Input
	events map[string]Event
	turns  map[int]bool
	cast   map[string]bool
	known  map[string]bool
	// fresh are the entities new in this answer: their names are the
	// model's text, written from the whole batch.
	fresh map[string]bool
	out   Record
}

func (v *validator) drop(section string, i int, format string, args ...any) {
	v.out.Drops = append(v.out.Drops, Drop{Section: section, Index: i, Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) turnsOf(ts []TurnInfo) {
	last := v.in.Last
	for i, t := range ts {
		switch {
		case !v.turns[int(t.Turn)]:
			v.drop("turns", i, "turn %d is not in this batch", t.Turn)
		case t.StoryTime != nil && (t.StoryTime.Day < 0 || t.StoryTime.Minute < 0 || t.StoryTime.Minute >= 24*60):
			v.drop("turns", i, "story time out of range (day %d, minute %d)", t.StoryTime.Day, t.StoryTime.Minute)
		case t.StoryTime != nil && t.StoryTime.Before(last):
			v.drop("turns", i, "story time runs backwards (day %d minute %d before day %d minute %d)", t.StoryTime.Day, t.StoryTime.Minute, last.Day, last.Minute)
		case RuneCount(t.Place) > MaxNameRunes:
			v.drop("turns", i, "place name longer than %d characters", MaxNameRunes)
		default:
			if t.StoryTime != nil {
				last = *t.StoryTime
			}
			v.out.Turns = append(v.out.Turns, t)
		}
	}
}

func (v *validator) eventsOf(es []EventInfo) {
	seen := map[string]bool{}
	for i, e := range es {
		switch {
		case v.events[e.Event].ID == "":
			v.drop("events", i, "cites an event id that was not shown")
		case seen[e.Event]:
			v.drop("events", i, "event %s enriched twice", e.Event)
		case !importanceOK(e.Importance):
			v.drop("events", i, "importance %d is not 1–10", e.Importance)
		case !aboutOK(e.About):
			v.drop("events", i, "about lists more than %d names or a name over %d characters", MaxAbout, MaxNameRunes)
		case RuneCount(e.Place) > MaxNameRunes:
			v.drop("events", i, "place name longer than %d characters", MaxNameRunes)
		default:
			seen[e.Event] = true
			v.out.Events = append(v.out.Events, e)
		}
	}
}

func (v *validator) changesOf(cs []ChangeInfo) {
	for i, c := range cs {
		switch {
		case !v.turns[int(c.Turn)]:
			v.drop("changes", i, "turn %d is not in this batch", c.Turn)
		case strings.TrimSpace(c.Text) == "":
			v.drop("changes", i, "empty text")
		case RuneCount(c.Text) > MaxTextRunes:
			v.drop("changes", i, "text longer than %d characters", MaxTextRunes)
		case !importanceOK(c.Importance):
			v.drop("changes", i, "importance %d is not 1–10", c.Importance)
		case !aboutOK(c.About) || RuneCount(c.Actor) > MaxNameRunes:
			v.drop("changes", i, "a name is too long or about lists more than %d names", MaxAbout)
		default:
			v.out.Changes = append(v.out.Changes, c)
		}
	}
}

func (v *validator) entitiesOf(es []Entity) {
	for i, e := range es {
		switch {
		case strings.TrimSpace(e.Name) == "" || RuneCount(e.Name) > MaxNameRunes || RuneCount(e.Within) > MaxNameRunes:
			v.drop("entities", i, "name empty or longer than %d characters", MaxNameRunes)
		case !entityKinds[e.Kind]:
			v.drop("entities", i, "kind is not place, item, exit or lore")
		default:
			if !v.known[strings.ToLower(e.Name)] {
				v.fresh[strings.ToLower(e.Name)] = true
			}
			v.known[strings.ToLower(e.Name)] = true
			v.out.Entities = append(v.out.Entities, e)
		}
	}
}

var entityKinds = map[string]bool{"place": true, "item": true, "exit": true, "lore": true}

func (v *validator) perceptionsOf(ps []Perception) {
	for i, p := range ps {
		p.Character = v.canon(p.Character)
		ev, shown := v.events[p.Event]
		told := ""
		if p.Mode == Told {
			told = v.toldVia(p, ev)
		}
		switch {
		case !v.cast[p.Character]:
			v.drop("perceptions", i, "character is not in the cast")
		case !shown:
			v.drop("perceptions", i, "cites an event id that was not shown")
		case !perceptionModes[p.Mode]:
			v.drop("perceptions", i, "mode is not saw, heard, told, inferred or none")
		case told != "":
			v.drop("perceptions", i, "told %s", told)
		case p.Mode != Told && !contains(ev.Present, p.Character):
			v.drop("perceptions", i, "character was not present at event %s", ev.ID)
		case (p.Mode == Told || p.Mode == Inferred) && strings.TrimSpace(p.Text) == "":
			v.drop("perceptions", i, "empty text")
		case RuneCount(p.Text) > MaxTextRunes || RuneCount(p.Gist) > MaxGistRunes:
			v.drop("perceptions", i, "text over %d or gist over %d characters", MaxTextRunes, MaxGistRunes)
		case p.Importance != 0 && !importanceOK(p.Importance):
			v.drop("perceptions", i, "importance %d is not 1–10", p.Importance)
		default:
			v.out.Perceptions = append(v.out.Perceptions, p)
		}
	}
}

var perceptionModes = map[string]bool{Saw: true, Heard: true, Told: true, Inferred: true, Missed: true}

// toldVia checks a told perception and returns why it cannot stand, or
// "". The telling event (via) was shown and is not the event itself; its
// speaker is the teller, who witnessed the event told (spoke it or
// perceived it) and is not the listener; and the listener perceived the
// telling. Who perceived what comes from the stored presence of the
// events (Event.Present: under a whisper only its two), never from the
// answer's words.
func (v *validator) toldVia(p Perception, ev Event) string {
	via, ok := v.events[p.Via]
	switch {
	case !ok || via.ID == ev.ID:
		return "without a shown telling event in via"
	case via.Actor == "" || via.Actor == p.Character:
		return "by the listener itself or by nobody"
	case via.Actor != ev.Actor && !contains(ev.Present, via.Actor):
		return "by someone who did not witness the event told"
	case !contains(via.Present, p.Character):
		return "via an event the character did not perceive"
	}
	return ""
}

func (v *validator) threadsOf(ts []ThreadOp) {
	open := map[string]bool{}
	for _, t := range v.in.Threads {
		open[t.ID] = true
	}
	for i, t := range ts {
		_, shown := v.events[t.Event]
		switch {
		case !shown:
			v.drop("threads", i, "cites an event id that was not shown")
		case t.Op == "open" && !threadKinds[t.Kind]:
			v.drop("threads", i, "kind is not promise, mystery or goal")
		case t.Op == "open" && (strings.TrimSpace(t.Text) == "" || RuneCount(t.Text) > MaxTextRunes):
			v.drop("threads", i, "text empty or longer than %d characters", MaxTextRunes)
		case t.Op == "resolve" && !open[t.Thread]:
			v.drop("threads", i, "resolves a thread id that is not open")
		case t.Op != "open" && t.Op != "resolve":
			v.drop("threads", i, "op is not open or resolve")
		default:
			v.out.Threads = append(v.out.Threads, t)
		}
	}
}

var threadKinds = map[string]bool{"promise": true, "mystery": true, "goal": true}

func (v *validator) ledgerOf(l *Ledger) {
	if l == nil {
		return
	}
	if n := ledgerRunes(*l); n > MaxLedgerRunes {
		v.drop("ledger", 0, "ledger is %d characters, over %d", n, MaxLedgerRunes)
		return
	}
	v.out.Ledger = l
}

func (v *validator) relationshipsOf(rs []Relationship) {
	for i, r := range rs {
		r.From, r.To = v.canon(r.From), v.canon(r.To)
		ev, shown := v.events[r.Event]
		switch {
		case !shown:
			v.drop("relationships", i, "cites an event id that was not shown")
		case !v.character(r.From) || !v.character(r.To) || r.From == r.To:
			v.drop("relationships", i, "from and to must be two characters of the cast or players")
		case !contains(ev.Present, r.From):
			v.drop("relationships", i, "from was not present at event %s", ev.ID)
		case !v.in.Witnessed(r.From):
			// The description is the model's text, written from the
			// whole batch: it may hold what from missed.
			v.drop("relationships", i, "from missed an event of this batch")
		case strings.TrimSpace(r.Description) == "" || RuneCount(r.Description) > MaxDescriptionRunes:
			v.drop("relationships", i, "description empty or longer than %d characters", MaxDescriptionRunes)
		default:
			v.out.Relationships = append(v.out.Relationships, r)
		}
	}
}

func (v *validator) knowledgeOf(ks []Knowledge) {
	for i, k := range ks {
		k.Character = v.canon(k.Character)
		ev, shown := v.events[k.Event]
		switch {
		case !shown:
			v.drop("knowledge", i, "cites an event id that was not shown")
		case !v.cast[k.Character]:
			v.drop("knowledge", i, "character is not in the cast")
		case !contains(ev.Present, k.Character):
			v.drop("knowledge", i, "character was not present at event %s", ev.ID)
		case !v.known[strings.ToLower(k.Entity)]:
			v.drop("knowledge", i, "entity is neither known nor new in this answer")
		case v.fresh[strings.ToLower(k.Entity)] && !v.in.Witnessed(k.Character):
			v.drop("knowledge", i, "entity is new in this batch, of which the character missed an event")
		default:
			v.out.Knowledge = append(v.out.Knowledge, k)
		}
	}
}

// canon resolves a character's name as the answer wrote it to the cast
// member's or player's name it stands for: the same name in other case or
// with stray spaces, or a cast member's name without the card id beside
// it, when only one member has that name. Any other name is returned as
// it is.
func (v *validator) canon(name string) string {
	n := strings.TrimSpace(name)
	if v.cast[n] || contains(v.in.Players, n) {
		return n
	}
	for _, c := range v.in.Cast {
		if strings.EqualFold(c.Name, n) {
			return c.Name
		}
	}
	for _, p := range v.in.Players {
		if strings.EqualFold(p, n) {
			return p
		}
	}
	// A card another card of the space shares a display name with is cast
	// as "Wren (wren-png)"; an answer that calls it "Wren" means it when
	// no other cast member could be meant.
	found := ""
	for _, c := range v.in.Cast {
		if len(c.Name) > len(n)+3 && strings.EqualFold(c.Name[:len(n)+2], n+" (") && strings.HasSuffix(c.Name, ")") {
			if found != "" {
				return name
			}
			found = c.Name
		}
	}
	if found != "" {
		return found
	}
	return name
}

func (v *validator) character(name string) bool {
	return v.cast[name] || contains(v.in.Players, name)
}

func importanceOK(n Int) bool { return n >= 1 && n <= 10 }

func aboutOK(names Strings) bool {
	if len(names) > MaxAbout {
		return false
	}
	for _, n := range names {
		if RuneCount(n) > MaxNameRunes {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
