package belief

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A scripted 60-turn scene of two cast members, run through the whole pure
// loop the caller will wire: the trigger after every turn, the batch and
// beliefs a request shows, the belief check, the reflection answer from a
// scripted model that reads only the rendered prompt and also cites a
// perception of the other character (as a confused model might), validation
// and installing the changes. Each one's beliefs must cite only its own
// perceptions.

var (
	shownPerc   = regexp.MustCompile(`\[p:(\S+) turn=(\d+)\]`)
	shownBelief = regexp.MustCompile(`\[b:(\S+) (doubtful|likely|sure)\]`)
)

type actor struct {
	name    string
	prefix  string
	all     []Perception
	fresh   []Perception
	beliefs []Belief
	runs    int
	minted  int
}

// scriptedReflection answers a reflection request from its user message.
func scriptedReflection(user, foreign string, round int) string {
	ps := shownPerc.FindAllStringSubmatch(user, -1)
	bs := shownBelief.FindAllStringSubmatch(user, -1)
	var a Answer
	if len(ps) >= 2 {
		a.Add = append(a.Add, Add{Text: fmt.Sprintf("Tess is up to something at the harbour, round %d.", round),
			Confidence: "sure", Supports: IDs{ps[0][1], ps[len(ps)-1][1], foreign}})
	}
	if len(bs) >= 1 && len(ps) >= 1 {
		a.Strengthen = append(a.Strengthen, Strengthen{Belief: bs[0][1], Supports: IDs{ps[len(ps)-1][1], foreign}})
	}
	if len(bs) >= 3 && round%2 == 0 {
		a.Merge = append(a.Merge, Merge{Beliefs: IDs{bs[1][1], bs[2][1]}, Text: "The harbour is not what it seems.", Supports: IDs{foreign}})
	}
	if len(bs) >= 2 && len(ps) >= 1 {
		a.Doubt = append(a.Doubt, Doubt{Belief: bs[len(bs)-1][1], Against: IDs{ps[0][1]}})
	}
	raw, _ := json.Marshal(a)
	return "```json\n" + string(raw) + "\n```"
}

func TestScriptedScene(t *testing.T) {
	t.Parallel()
	mara := &actor{name: "Mara", prefix: "M-"}
	elias := &actor{name: "Elias", prefix: "E-"}
	cast := []*actor{mara, elias}
	places := []string{"the tavern", "the cellar", "the harbour", "the lighthouse"}
	within := map[string]string{"the cellar": "the tavern"}
	words := []string{"lantern", "anchor", "ledger", "compass", "rope", "bell"}
	cfg := defaultTrigger()
	var lastTurn, lastAuto int64
	last := Scene{Place: places[0], Day: 1}
	for turn := int64(1); turn <= 60; turn++ {
		for _, c := range cast {
			present := !(c == elias && turn%3 == 0) && !(c == mara && turn%5 == 0)
			if !present {
				continue
			}
			w := words[turn%int64(len(words))]
			p := Perception{ID: fmt.Sprintf("%s%02d", c.prefix, turn), Turn: turn, Importance: int(turn%10) + 1, Pivotal: turn%13 == 0,
				Text: fmt.Sprintf("%s saw Tess carry the %s past the harbour on turn %d.", c.name, w, turn), About: []string{"Tess", w}}
			c.all = append(c.all, p)
			c.fresh = append(c.fresh, p)
		}
		now := Scene{Place: places[(turn/17)%int64(len(places))], Day: 1 + int(turn/45)}
		in := TriggerInput{Turn: turn, LastTurn: lastTurn, LastAutoTurn: lastAuto, Scene: now, LastScene: last, Within: within,
			Candidates: []Candidate{{Name: "Mara", Role: Cast, New: len(mara.fresh)}, {Name: "Elias", Role: Cast, New: len(elias.fresh)}, {Name: "Player", Role: Player, New: 60}},
			Manual:     turn == 33}
		d := Decide(cfg, in)
		if !d.Run {
			continue
		}
		if slices.Contains(d.Characters, "Player") {
			t.Fatalf("turn %d: the player reflects", turn)
		}
		lastTurn, last = turn, now
		if d.Why != WhyManual {
			lastAuto = turn
		}
		for _, name := range d.Characters {
			c := mara
			other := elias
			if name == "Elias" {
				c, other = elias, mara
			}
			reflectOnce(t, c, other.all[len(other.all)-1].ID)
		}
	}
	for _, c := range cast {
		if c.runs < 2 {
			t.Errorf("%s reflected %d times in 60 turns, want at least 2", c.name, c.runs)
		}
		if len(c.beliefs) == 0 {
			t.Errorf("%s formed no belief", c.name)
		}
		t.Logf("%s: %d runs, %d beliefs, %d perceptions still new", c.name, c.runs, len(c.beliefs), len(c.fresh))
		for _, b := range c.beliefs {
			if !b.Confidence.Valid() {
				t.Errorf("%s: belief %s has confidence %v", c.name, b.ID, b.Confidence)
			}
			for _, e := range b.Evidence {
				if !strings.HasPrefix(e.Perception, c.prefix) {
					t.Errorf("%s: belief %s cites %s, a perception of someone else", c.name, b.ID, e.Perception)
				}
			}
		}
	}
}

// reflectOnce runs one character's round and installs what it returns.
func reflectOnce(t *testing.T, c *actor, foreign string) {
	t.Helper()
	c.runs++
	batch := Batch(c.fresh, 0)
	in := CheckInput{Beliefs: c.beliefs, New: batch, Known: c.all, Max: defaults.MaxChecks}
	var results []CheckResult
	for i, chk := range SelectChecks(in) {
		user := CheckPrompt("en", chk)[1].Content
		answer := `{"compatible": true}`
		if i == 0 {
			ids := shownPerc.FindAllStringSubmatch(user, -1)
			answer = fmt.Sprintf(`{"compatible": false, "against": [%q, %q]}`, ids[0][1], foreign)
		}
		a, err := ParseCheck(answer)
		if err != nil {
			t.Fatalf("ParseCheck: %v", err)
		}
		results = append(results, CheckResult{Check: chk, Answer: a})
	}
	after, doubted := ApplyChecks(c.beliefs, results)
	shown := PromptBeliefs(CheckInput{Beliefs: after, New: batch, Known: c.all}, 0)
	msgs := Prompt(PromptInput{Language: "en", Character: c.name, Perceptions: batch, Beliefs: shown})
	a, err := ParseAnswer(scriptedReflection(msgs[1].Content, foreign, c.runs))
	if err != nil {
		t.Fatalf("ParseAnswer: %v", err)
	}
	r := Round{Perceptions: batch, Beliefs: shown, PivotalImportance: defaults.PivotalImportance,
		NewID: func() string { c.minted++; return fmt.Sprintf("%sb%d", c.prefix, c.minted) }}
	for _, d := range doubted {
		r.Doubted = append(r.Doubted, d.ID)
	}
	ch, _ := Validate(r, a)
	// Install: the check's doubt, then the round's changes.
	c.beliefs = after
	for _, u := range ch.Updated {
		c.beliefs[slices.IndexFunc(c.beliefs, func(b Belief) bool { return b.ID == u.ID })] = u
	}
	c.beliefs = slices.DeleteFunc(c.beliefs, func(b Belief) bool { return slices.Contains(ch.Deleted, b.ID) })
	c.beliefs = append(c.beliefs, ch.Created...)
	c.fresh = slices.DeleteFunc(c.fresh, func(p Perception) bool {
		return slices.ContainsFunc(batch, func(s Perception) bool { return s.ID == p.ID })
	})
}
