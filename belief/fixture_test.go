package belief

import (
	"fmt"
	"sort"
	"strings"

	"troupe/config"
)

// defaults are config.Default's reflection.* settings: belief has none of
// its own, its callers pass config's.
var defaults = config.Default().Reflection

// The scene every rule test reflects over: Mara's new perceptions (turns
// are the space's sequence) and her beliefs before this round.
var (
	p1 = Perception{ID: "p1", Turn: 10, Text: "Tess hid the brass key under the stair.", Importance: 4, About: []string{"Tess", "brass key"}}
	p2 = Perception{ID: "p2", Turn: 12, Text: "Tess lied about where she was at night.", Importance: 5, About: []string{"Tess"}}
	p3 = Perception{ID: "p3", Turn: 12, Text: "Tess said the key was lost.", Importance: 3, About: []string{"Tess", "brass key"}}
	p4 = Perception{ID: "p4", Turn: 15, Text: "Elias drew a knife on the captain.", Importance: 9, Pivotal: true, About: []string{"Elias", "captain"}}
	p5 = Perception{ID: "p5", Turn: 15, Text: "Elias laughed at the captain's orders.", Importance: 9, About: []string{"Elias"}}
	p6 = Perception{ID: "p6", Turn: 16, Text: "The captain handed Elias a sealed letter.", Importance: 7, Pivotal: true, About: []string{"captain", "Elias"}}
	p7 = Perception{ID: "p7", Turn: 20, Text: "Tess gave the brass key back to Mara.", Importance: 6, About: []string{"Tess", "brass key"}}

	b1 = Belief{ID: "b1", Text: "Tess keeps secrets from me.", Confidence: Likely, About: []string{"Tess"}, FormedTurn: 8, ChangedTurn: 11,
		Evidence: []Evidence{{Perception: "p0", Turn: 8, Stance: Supports}, {Perception: "p00", Turn: 11, Stance: Supports}}}
	b2 = Belief{ID: "b2", Text: "Elias can be trusted.", Confidence: Sure, About: []string{"Elias"}, FormedTurn: 6, ChangedTurn: 14,
		Evidence: []Evidence{{Perception: "q1", Turn: 6, Stance: Supports}, {Perception: "q2", Turn: 14, Stance: Supports}}}
	b3 = Belief{ID: "b3", Text: "The captain is Elias's friend.", Confidence: Doubtful, About: []string{"captain", "Elias"}, FormedTurn: 9, ChangedTurn: 14,
		Evidence: []Evidence{{Perception: "q3", Turn: 9, Stance: Supports}, {Perception: "q4", Turn: 14, Stance: Contradicts}}}
	b4 = Belief{ID: "b4", Text: "Tess is careless with keys.", Confidence: Likely, About: []string{"Tess"}, FormedTurn: 30, ChangedTurn: 30,
		Evidence: []Evidence{{Perception: "q5", Turn: 29, Stance: Supports}, {Perception: "q6", Turn: 30, Stance: Supports}}}
	b5 = Belief{ID: "b5", Text: "The brass key belongs to Elias.", Confidence: Likely, About: []string{"brass key", "Elias"}, FormedTurn: 5, ChangedTurn: 5,
		Evidence: []Evidence{{Perception: "q7", Turn: 4, Stance: Supports}, {Perception: "q8", Turn: 5, Stance: Supports}}}
	b6 = Belief{ID: "b6", Text: "The stair is safe at night.", Confidence: Doubtful, FormedTurn: 3, ChangedTurn: 12,
		Evidence: []Evidence{{Perception: "q9", Turn: 3, Stance: Supports}, {Perception: "p2", Turn: 12, Stance: Contradicts}}}
	b7 = Belief{ID: "b7", Text: "Tess wants the key for herself.", Confidence: Likely, About: []string{"Tess"}, FormedTurn: 9, ChangedTurn: 9,
		Evidence: []Evidence{{Perception: "q10", Turn: 9, Stance: Supports}, {Perception: "p7", Turn: 20, Stance: Contradicts}, {Perception: "p1", Turn: 10, Stance: Supports}}}
	b8 = Belief{ID: "b8", Text: "Elias never breaks his word.", Confidence: Sure, About: []string{"Elias"}, FormedTurn: 13, ChangedTurn: 13,
		Evidence: []Evidence{{Perception: "q11", Turn: 13, Stance: Supports}}}
	b9 = Belief{ID: "b9", Text: "Elias keeps his promises.", Confidence: Sure, About: []string{"Elias"}, FormedTurn: 13, ChangedTurn: 13,
		Evidence: []Evidence{{Perception: "q12", Turn: 13, Stance: Supports}}}
)

func scene() Round {
	return Round{
		Perceptions: []Perception{p1, p2, p3, p4, p5, p6, p7},
		Beliefs:     []Belief{b1, b2, b3, b4, b5, b6, b7, b8, b9},
		Doubted:     []string{"b6"},

		PivotalImportance: defaults.PivotalImportance,
	}
}

// storyWords are words of the scene's texts: no note may carry them.
var storyWords = []string{"Tess", "Elias", "Mara", "captain", "key", "lied", "stair", "secret", "knife", "letter", "撒谎", "钥匙"}

// summary renders changes one line each, in a stable order, for comparing.
func summary(c Changes) []string {
	var out []string
	for _, b := range c.Created {
		line := fmt.Sprintf("create %s %s %s%s", b.ID, b.Confidence, evidence(b), turns(b))
		if len(b.About) > 0 {
			line += " about=" + strings.Join(b.About, ",")
		}
		if len(b.MergedFrom) > 0 {
			line += " from=" + strings.Join(b.MergedFrom, ",")
		}
		out = append(out, line)
	}
	for _, b := range c.Updated {
		out = append(out, fmt.Sprintf("update %s %s %s%s", b.ID, b.Confidence, evidence(b), turns(b)))
	}
	for _, id := range c.Deleted {
		out = append(out, "delete "+id)
	}
	return out
}

func evidence(b Belief) string {
	var ev []string
	for _, e := range b.Evidence {
		sign := "+"
		if e.Stance == Contradicts {
			sign = "-"
		}
		ev = append(ev, sign+e.Perception)
	}
	sort.Strings(ev)
	return strings.Join(ev, " ")
}

func turns(b Belief) string { return fmt.Sprintf(" @%d/%d", b.FormedTurn, b.ChangedTurn) }

func noteLines(ns []Note) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Item + " " + string(n.Action) + ": " + string(n.Reason)
	}
	return out
}
