package memory

import (
	"encoding/json"
	"sort"
	"strings"

	"troupe/models"
	"troupe/record"
)

// defaultImportance is an event's importance when the recorder gave none.
const defaultImportance = 3

// recordInstall turns a validated record of batch b into the rows one
// transaction installs.
func recordInstall(b models.RecordBatch, in record.Input, rec record.Record, cast []models.CastMember) models.RecordInstall {
	inst := models.RecordInstall{ChatID: b.Chat.ID, SpaceID: b.Chat.SpaceID, Resolve: map[string]string{}}
	type when struct {
		day, minute int
		place       string
	}
	turnInfo := map[int]record.TurnInfo{}
	for _, t := range rec.Turns {
		turnInfo[int(t.Turn)] = t
	}
	cur := when{day: b.LastDay, minute: b.LastMinute, place: in.Ledger.Place}
	at := map[int]when{}
	lastMsg := map[int]string{}
	for _, e := range b.Events {
		turn := int(e.Seq)
		if _, done := at[turn]; !done {
			if t, ok := turnInfo[turn]; ok {
				if t.StoryTime != nil {
					cur.day, cur.minute = int(t.StoryTime.Day), int(t.StoryTime.Minute)
				}
				if t.Place != "" {
					cur.place = t.Place
				}
			}
			at[turn] = cur
		}
		lastMsg[turn] = e.MessageID
	}
	info := map[string]record.EventInfo{}
	for _, e := range rec.Events {
		info[e.Event] = e
	}
	events := map[string]models.Event{}
	for _, e := range b.Events {
		w := at[int(e.Seq)]
		up := models.Event{ID: e.ID, Importance: defaultImportance, Place: w.place, Day: w.day, Minute: w.minute, Seq: e.Seq}
		if ei, ok := info[e.ID]; ok {
			up.Importance = int(ei.Importance)
			up.About = strings.Join(ei.About, "\n")
			if ei.Place != "" {
				up.Place = ei.Place
			}
		}
		inst.EventIDs = append(inst.EventIDs, e.ID)
		inst.Enrich = append(inst.Enrich, up)
		events[e.ID] = up
	}
	for i, c := range rec.Changes {
		turn := int(c.Turn)
		w := at[turn]
		inst.Changes = append(inst.Changes, models.Event{ID: models.NewID(), ChatID: b.Chat.ID, SpaceID: b.Chat.SpaceID,
			MessageID: lastMsg[turn], Seq: int64(turn), Ord: 1000 + i, Kind: string(record.Change),
			Actor: models.FitName(c.Actor, models.NameSize), Text: c.Text, Place: w.place, Day: w.day, Minute: w.minute,
			Importance: int(c.Importance), Pivotal: c.Pivotal, About: strings.Join(c.About, "\n"), Sealed: true})
	}
	for _, p := range rec.Perceptions {
		e := events[p.Event]
		imp := int(p.Importance)
		if imp == 0 {
			imp = e.Importance
		}
		inst.Perceptions = append(inst.Perceptions, models.Perception{ID: models.NewID(), ChatID: b.Chat.ID, SpaceID: b.Chat.SpaceID,
			Character: models.FitName(p.Character, models.NameSize), EventID: p.Event, Mode: p.Mode, Text: p.Text, Gist: p.Gist,
			Via: p.Via, Importance: imp, Seq: e.Seq, Day: e.Day, Minute: e.Minute})
	}
	for _, t := range rec.Threads {
		if t.Op == "resolve" {
			inst.Resolve[t.Thread] = t.Event
			continue
		}
		inst.Threads = append(inst.Threads, models.Thread{ID: models.NewID(), ChatID: b.Chat.ID, SpaceID: b.Chat.SpaceID,
			Kind: t.Kind, Text: t.Text, Open: true, OpenedBy: t.Event, Seq: events[t.Event].Seq})
	}
	if rec.Ledger != nil {
		l, _ := json.Marshal(rec.Ledger)
		s := string(l)
		inst.Ledger = &s
	}
	for _, e := range rec.Entities {
		inst.Entities = append(inst.Entities, models.Entity{ID: models.NewID(), SpaceID: b.Chat.SpaceID, Name: e.Name,
			Kind: e.Kind, Within: e.Within, ChatID: b.Chat.ID})
	}
	for _, r := range rec.Relationships {
		inst.Relationships = append(inst.Relationships, models.Relationship{FromName: r.From, ToName: r.To,
			Description: r.Description, Since: events[r.Event].Seq, EventID: r.Event})
	}
	for _, k := range rec.Knowledge {
		inst.Knowledge = append(inst.Knowledge, models.Knowledge{Character: k.Character, EntityID: k.Entity, EventID: k.Event})
	}
	var names []string
	for _, m := range cast {
		inst.Characters = append(inst.Characters, models.Character{ID: models.NewID(), SpaceID: b.Chat.SpaceID, Name: m.Name,
			Kind: models.CharacterCast, CardID: m.CardID})
		names = append(names, m.Name)
	}
	for _, p := range in.Players {
		inst.Characters = append(inst.Characters, models.Character{ID: models.NewID(), SpaceID: b.Chat.SpaceID, Name: p,
			Kind: models.CharacterPlayer})
	}
	for _, name := range background(rec.Ledger, names, in.Players) {
		inst.Characters = append(inst.Characters, models.Character{ID: models.NewID(), SpaceID: b.Chat.SpaceID,
			Name: models.FitName(name, models.NameSize), Kind: models.CharacterBackground, ChatID: b.Chat.ID})
	}
	return inst
}

// background lists the background characters a new ledger names: those of
// its roster and of its "where" that are neither the cast member nor a
// player. The contract has no other place for them, and none for aliases.
// A name already in the space keeps its row (and the chat that introduced
// it).
func background(l *record.Ledger, cast, players []string) []string {
	if l == nil {
		return nil
	}
	known := map[string]bool{}
	for _, c := range cast {
		known[strings.ToLower(c)] = true
	}
	for _, p := range players {
		known[strings.ToLower(p)] = true
	}
	var out []string
	add := func(name string) {
		name = strings.TrimSpace(name)
		if k := strings.ToLower(name); name != "" && !known[k] && record.RuneCount(name) <= record.MaxNameRunes {
			known[k] = true
			out = append(out, name)
		}
	}
	for _, n := range l.Roster {
		add(n)
	}
	where := make([]string, 0, len(l.Where))
	for n := range l.Where {
		where = append(where, n)
	}
	sort.Strings(where)
	for _, n := range where {
		add(n)
	}
	return out
}
