package memory

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"troupe/models"
	"troupe/prompt"
	"troupe/record"
)

// RecorderInput turns a stored batch into the recorder's input: the cast
// (the chat's cast members, away or removed ones marked away), the players
// present, the ledger, the open threads, the known entities the batch
// mentions, and the events with who perceived them.
func RecorderInput(b models.RecordBatch, cast []models.CastMember) record.Input {
	in := record.Input{Last: record.StoryTime{Day: record.Int(b.LastDay), Minute: record.Int(b.LastMinute)}}
	isCast := map[string]bool{}
	for _, m := range cast {
		in.Cast = append(in.Cast, record.CastMember{Name: m.Name, Away: m.Away || !m.Active()})
		isCast[m.Name] = true
	}
	if b.Ledger != "" {
		_ = json.Unmarshal([]byte(b.Ledger), &in.Ledger)
	}
	players := map[string]bool{}
	var text strings.Builder
	for _, e := range b.Events {
		// Present are those who perceived the event; the players carried
		// past a whisper (Unheard) are still players of the chat.
		present := b.Present[e.MessageID]
		for _, p := range append(slices.Clip(present), b.Unheard[e.MessageID]...) {
			if !isCast[p] && !players[p] {
				players[p] = true
				in.Players = append(in.Players, p)
			}
		}
		in.Events = append(in.Events, record.Event{ID: e.ID, Turn: int(e.Seq), Actor: e.Actor, Kind: record.Kind(e.Kind), Text: e.Text, Present: present})
		text.WriteString(strings.ToLower(e.Text))
		text.WriteByte('\n')
	}
	sort.Strings(in.Players)
	for _, t := range b.Threads {
		in.Threads = append(in.Threads, record.OpenThread{ID: t.ID, Kind: t.Kind, Text: t.Text})
	}
	all := text.String()
	for _, e := range b.Entities {
		if mentioned(all, e) {
			in.Entities = append(in.Entities, record.Entity{Name: e.Name, Kind: e.Kind, Within: e.Within})
		}
	}
	return in
}

func toMessages(ms []record.Message) []prompt.Message {
	out := make([]prompt.Message, len(ms))
	for i, m := range ms {
		out[i] = prompt.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// shortenIDs replaces the ids the prompt shows (events, threads) by the
// shortest suffixes that stay unique in the batch: a 26-character id costs
// some 15 tokens each time the prompt or the answer names it. It returns
// the map back to the full ids.
func shortenIDs(in *record.Input) map[string]string {
	var ids []string
	for _, e := range in.Events {
		ids = append(ids, e.ID)
	}
	for _, t := range in.Threads {
		ids = append(ids, t.ID)
	}
	short := map[string]string{}
	for n := 5; ; n++ {
		clear(short)
		unique := true
		for _, id := range ids {
			k := id
			if len(id) > n {
				k = id[len(id)-n:]
			}
			if _, dup := short[k]; dup {
				unique = false
				break
			}
			short[k] = id
		}
		if unique || n >= 26 {
			break
		}
	}
	back := map[string]string{}
	for k, id := range short {
		back[id] = k
	}
	for i := range in.Events {
		in.Events[i].ID = back[in.Events[i].ID]
	}
	for i := range in.Threads {
		in.Threads[i].ID = back[in.Threads[i].ID]
	}
	return short
}

// unalias turns the short ids of a validated record back into full ones
// (validation accepted only ids the batch showed).
func unalias(rec *record.Record, full map[string]string) {
	id := func(s string) string {
		if f, ok := full[s]; ok {
			return f
		}
		return s
	}
	for i := range rec.Events {
		rec.Events[i].Event = id(rec.Events[i].Event)
	}
	for i := range rec.Perceptions {
		rec.Perceptions[i].Event, rec.Perceptions[i].Via = id(rec.Perceptions[i].Event), id(rec.Perceptions[i].Via)
	}
	for i := range rec.Threads {
		rec.Threads[i].Event, rec.Threads[i].Thread = id(rec.Threads[i].Event), id(rec.Threads[i].Thread)
	}
	for i := range rec.Relationships {
		rec.Relationships[i].Event = id(rec.Relationships[i].Event)
	}
	for i := range rec.Knowledge {
		rec.Knowledge[i].Event = id(rec.Knowledge[i].Event)
	}
}

// mentioned reports whether text (lower case) names the entity or one of
// its aliases.
func mentioned(text string, e models.Entity) bool {
	for _, n := range append([]string{e.Name}, strings.Split(e.Aliases, "\n")...) {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && strings.Contains(text, n) {
			return true
		}
	}
	return false
}
