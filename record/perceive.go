package record

import (
	"encoding/json"
	"sort"
)

// Perceive completes the perceptions of a batch: every cast member present
// at an event (presence is stored per event when the turn is; an away mark
// made since changes nothing about what was perceived) perceives it by default — saw an action or a
// change, heard a line — verbatim; a perception the model returned for the
// same character and event replaces the default (mode none removes it); a
// told perception of an absent character is added. The result is ordered by
// event, then character.
func Perceive(in Input, model []Perception) []Perception {
	type key struct{ char, event string }
	override := map[key]Perception{}
	for _, p := range model {
		override[key{p.Character, p.Event}] = p
	}
	var out []Perception
	done := map[key]bool{}
	for _, e := range in.Events {
		for _, c := range in.Cast {
			k := key{c.Name, e.ID}
			if !contains(e.Present, c.Name) {
				continue
			}
			done[k] = true
			if p, ok := override[k]; ok {
				if p.Mode != Missed {
					out = append(out, withDefaults(p, e))
				}
				continue
			}
			out = append(out, Perception{Character: c.Name, Event: e.ID, Mode: defaultMode(e.Kind), Text: e.Text})
		}
	}
	for _, p := range model {
		if k := (key{p.Character, p.Event}); !done[k] && p.Mode != Missed {
			done[k] = true
			out = append(out, withDefaults(p, eventOf(in, p.Event)))
		}
	}
	order := map[string]int{}
	for i, e := range in.Events {
		order[e.ID] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Event] < order[out[j].Event] })
	return out
}

func defaultMode(k Kind) string {
	if k == Line {
		return Heard
	}
	return Saw
}

// withDefaults fills a model perception's empty text with the event's
// verbatim text.
func withDefaults(p Perception, e Event) Perception {
	if p.Text == "" {
		p.Text = e.Text
	}
	return p
}

func eventOf(in Input, id string) Event {
	for _, e := range in.Events {
		if e.ID == id {
			return e
		}
	}
	return Event{}
}

func ledgerRunes(l Ledger) int {
	b, _ := json.Marshal(l)
	return RuneCount(string(b))
}
