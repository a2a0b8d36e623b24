package record

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Ledger is the recorder's world state (seed 000's tool ledger): story
// time, the scene's place, where each character is, what each holds, flags,
// open threads and the roster. The scribe sees all of it; a character sees
// only its View.
type Ledger struct {
	Time      string              `json:"time,omitempty"`
	Place     string              `json:"place,omitempty"`
	Where     map[string]string   `json:"where,omitempty"`
	Inventory map[string][]string `json:"inventory,omitempty"`
	Flags     map[string]string   `json:"flags,omitempty"`
	Threads   []string            `json:"threads,omitempty"`
	Roster    []string            `json:"roster,omitempty"`
}

// MaxLedgerRunes bounds a ledger's JSON, so that it always leaves the
// resident summary room in the 4300-character envelope they share.
const MaxLedgerRunes = 3000

// PlaceOf returns where the ledger puts name: its own entry, else the
// scene's place.
func (l Ledger) PlaceOf(name string) string {
	if p, ok := l.Where[name]; ok && p != "" {
		return p
	}
	return l.Place
}

// Elsewhere reports whether the ledger places name somewhere other than
// the scene: such a cast member counts as away.
func (l Ledger) Elsewhere(name string) bool {
	p, ok := l.Where[name]
	return ok && p != "" && l.Place != "" && !strings.EqualFold(p, l.Place)
}

// ViewInput is what a character knows beyond the ledger itself.
type ViewInput struct {
	// Character is the one whose view this is.
	Character string
	// Present are the characters in its scene (cast members and players).
	Present []string
	// Threads are the open threads it perceived.
	Threads []string
	// Known are the places and exits it knows (its knowledge edges).
	Known []string
}

// View renders the ledger as in.Character knows it: the time, the place it
// is in, who is there, what those present visibly hold, the threads it
// perceived, and the places and exits it knows. Flags, other places'
// occupants and everything it did not perceive stay out.
func (l Ledger) View(lang string, in ViewInput) string {
	w := viewWords[lang]
	if w.time == "" {
		w = viewWords["en"]
	}
	var b strings.Builder
	line := func(label, value string) {
		if strings.TrimSpace(value) != "" {
			fmt.Fprintf(&b, "%s%s\n", label, value)
		}
	}
	line(w.time, l.Time)
	line(w.place, l.PlaceOf(in.Character))
	here := l.PlaceOf(in.Character)
	var present []string
	for _, name := range in.Present {
		if name != in.Character && l.PlaceOf(name) == here {
			present = append(present, name)
		}
	}
	line(w.present, strings.Join(present, w.sep))
	holders := append([]string{in.Character}, present...)
	for _, name := range holders {
		if items := l.Inventory[name]; len(items) > 0 {
			line(fmt.Sprintf(w.holds, name), strings.Join(items, w.sep))
		}
	}
	line(w.threads, strings.Join(in.Threads, w.sep))
	known := slices.Clone(in.Known)
	sort.Strings(known)
	line(w.known, strings.Join(slices.Compact(known), w.sep))
	return strings.TrimRight(b.String(), "\n")
}

type viewWordsT struct {
	time, place, present, holds, threads, known, sep string
}

var viewWords = map[string]viewWordsT{
	"en": {time: "Time: ", place: "Where you are: ", present: "Here with you: ", holds: "%s carries: ",
		threads: "Open matters you know of: ", known: "Places and ways you know: ", sep: ", "},
	"zh": {time: "时间：", place: "你所在之处：", present: "在场的人：", holds: "%s 身上带着：",
		threads: "你知道的未了之事：", known: "你认得的地方与出路：", sep: "、"},
}

// RuneCount is the length the envelope budget counts.
func RuneCount(s string) int { return utf8.RuneCountInString(s) }
