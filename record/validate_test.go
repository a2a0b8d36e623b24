package record

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/golden"
)

// batch is two turns at the west gate: Tess and Mara present, Elias away;
// then Tess tells Elias what Mara did.
func batch() Input {
	return Input{
		Cast:     []CastMember{{Name: "Mara"}, {Name: "Elias", Away: true}},
		Players:  []string{"Tess"},
		Ledger:   Ledger{Time: "day 3, evening", Place: "the west gate"},
		Entities: []Entity{{Name: "the west gate", Kind: "place", Within: "the town"}},
		Threads:  []OpenThread{{ID: "01JT", Kind: "mystery", Text: "Who took the key?"}},
		Events: []Event{
			{ID: "01JA", Turn: 12, Actor: "Tess", Kind: Line, Text: `"Open it."`, Present: []string{"Mara", "Tess"}},
			{ID: "01JB", Turn: 12, Actor: "Mara", Kind: Action, Text: "*She turns the key.*", Present: []string{"Mara", "Tess"}},
			{ID: "01JC", Turn: 13, Actor: "Tess", Kind: Line, Text: `"Mara opened the gate."`, Present: []string{"Elias", "Tess"}},
		},
		Last:   StoryTime{Day: 3, Minute: 1200},
		Fading: true,
	}
}

func TestValidateDropsEachBadItemWithItsReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer string
		// want is the reason's fragment; "" means the item is kept.
		want string
	}{
		{"a turn in the batch", `{"turns":[{"turn":12,"story_time":{"day":3,"minute":1300},"place":"the west gate"}]}`, ""},
		{"a turn not in the batch", `{"turns":[{"turn":9}]}`, "turn 9 is not in this batch"},
		{"story time backwards", `{"turns":[{"turn":12,"story_time":{"day":2,"minute":10}}]}`, "story time runs backwards"},
		{"minute out of range", `{"turns":[{"turn":12,"story_time":{"day":3,"minute":2000}}]}`, "out of range"},
		{"an event shown", `{"events":[{"event":"01JB","importance":7,"about":["the west gate"]}]}`, ""},
		{"an unknown event id", `{"events":[{"event":"01ZZ","importance":7}]}`, "event id that was not shown"},
		{"importance 0", `{"events":[{"event":"01JB","importance":0}]}`, "importance 0 is not 1–10"},
		{"importance 11", `{"changes":[{"turn":12,"text":"The gate is open.","importance":11}]}`, "importance 11 is not 1–10"},
		{"importance as a string", `{"events":[{"event":"01JB","importance":"6"}]}`, ""},
		{"a change", `{"changes":[{"turn":12,"actor":"Mara","text":"The west gate is unlocked.","importance":7,"pivotal":true}]}`, ""},
		{"a change over the text limit", `{"changes":[{"turn":12,"text":"` + strings.Repeat("x", MaxTextRunes+1) + `","importance":3}]}`, "text longer than"},
		{"a perception of a present cast member", `{"perceptions":[{"character":"Mara","event":"01JA","mode":"heard","text":"Tess wants it open."}]}`, ""},
		{"a perception naming the cast member in other case", `{"perceptions":[{"character":" mara","event":"01JA","mode":"heard","text":"Tess wants it open."}]}`, ""},
		{"a perception for an absent character", `{"perceptions":[{"character":"Elias","event":"01JA","mode":"heard","text":"…"}]}`, "was not present"},
		{"a perception for someone not in the cast", `{"perceptions":[{"character":"Tess","event":"01JA","mode":"heard"}]}`, "not in the cast"},
		{"told via an event the character was at", `{"perceptions":[{"character":"Elias","event":"01JB","mode":"told","text":"Mara opened the gate.","via":"01JC"}]}`, ""},
		{"told without via", `{"perceptions":[{"character":"Elias","event":"01JB","mode":"told","text":"…"}]}`, "told without"},
		{"told via the event itself", `{"perceptions":[{"character":"Mara","event":"01JC","mode":"told","text":"…","via":"01JC"}]}`, "told without"},
		{"an unknown mode", `{"perceptions":[{"character":"Mara","event":"01JA","mode":"smelled"}]}`, "mode is not"},
		{"inferred without text", `{"perceptions":[{"character":"Mara","event":"01JA","mode":"inferred"}]}`, "empty text"},
		{"open a thread", `{"threads":[{"op":"open","kind":"promise","text":"Mara will return the key.","event":"01JB"}]}`, ""},
		{"resolve an open thread", `{"threads":[{"op":"resolve","thread":"01JT","event":"01JB"}]}`, ""},
		{"resolve a thread that is not open", `{"threads":[{"op":"resolve","thread":"01JX","event":"01JB"}]}`, "thread id that is not open"},
		{"a thread of an unknown kind", `{"threads":[{"op":"open","kind":"vibe","text":"x","event":"01JB"}]}`, "kind is not promise"},
		{"a ledger", `{"ledger":{"time":"day 3, night","place":"the west gate","where":{"Elias":"the tavern"}}}`, ""},
		{"a ledger too large", `{"ledger":{"flags":{"k":"` + strings.Repeat("y", MaxLedgerRunes) + `"}}}`, "ledger is"},
		{"a new entity", `{"entities":[{"name":"the brass key","kind":"item"}]}`, ""},
		{"an entity of an unknown kind", `{"entities":[{"name":"the brass key","kind":"thing"}]}`, "kind is not place"},
		{"a relationship", `{"relationships":[{"from":"Tess","to":"Mara","description":"a stranger who asks too much","event":"01JA"}]}`, ""},
		{"a relationship from a character absent at its event", `{"relationships":[{"from":"Elias","to":"Tess","description":"owes her a drink","event":"01JA"}]}`, "was not present"},
		{"a relationship from a character that missed part of the batch", `{"relationships":[{"from":"Mara","to":"Tess","description":"a stranger who asks too much","event":"01JA"}]}`, "missed an event"},
		{"a relationship with itself", `{"relationships":[{"from":"Mara","to":"Mara","description":"x","event":"01JA"}]}`, "two characters"},
		{"knowledge of a known entity", `{"knowledge":[{"character":"Mara","entity":"the west gate","event":"01JB"}]}`, ""},
		{"knowledge of an entity new in a batch the character missed part of", `{"entities":[{"name":"the brass key","kind":"item"}],"knowledge":[{"character":"Mara","entity":"the brass key","event":"01JB"}]}`, "missed an event"},
		{"knowledge of an unknown entity", `{"knowledge":[{"character":"Mara","entity":"the moon door","event":"01JB"}]}`, "neither known nor new"},
		{"knowledge for an absent character", `{"knowledge":[{"character":"Elias","entity":"the west gate","event":"01JB"}]}`, "was not present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAnswer(tt.answer)
			if err != nil {
				t.Fatalf("ParseAnswer: %v", err)
			}
			r := Validate(batch(), a)
			if tt.want == "" {
				if len(r.Drops) != 0 {
					t.Fatalf("dropped %v, want the item kept", r.Drops)
				}
				return
			}
			if len(r.Drops) != 1 || !strings.Contains(r.Drops[0].Reason, tt.want) {
				t.Fatalf("drops = %v, want one with %q", r.Drops, tt.want)
			}
		})
	}
}

// TestKnowledgeOfANewEntity: a cast member that perceived every event of
// the batch may know a thing the answer introduces; one that missed an
// event may not (TestValidateDropsEachBadItemWithItsReason).
func TestKnowledgeOfANewEntity(t *testing.T) {
	t.Parallel()
	in := batch()
	in.Events = in.Events[:2]
	a, err := ParseAnswer(`{"entities":[{"name":"the brass key","kind":"item"}],"knowledge":[{"character":"Mara","entity":"the brass key","event":"01JB"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := Validate(in, a); len(r.Drops) != 0 || len(r.Knowledge) != 1 {
		t.Errorf("drops %v, knowledge %v: want Mara to know the key", r.Drops, r.Knowledge)
	}
}

// TestValidateToldNeedsAWitnessTellingTheListener: a told perception
// stands only when its via event is spoken by someone who witnessed the
// event told, other than the listener, to an audience the listener was in.
func TestValidateToldNeedsAWitnessTellingTheListener(t *testing.T) {
	t.Parallel()
	in := batch()
	in.Players = append(in.Players, "Rook")
	in.Events = append(in.Events,
		// Mara whispers to Tess: Elias is back in the scene but not told.
		Event{ID: "01JD", Turn: 14, Actor: "Mara", Kind: Line, Text: `"The key is mine."`, Present: []string{"Mara", "Tess"}},
		Event{ID: "01JE", Turn: 15, Actor: "Tess", Kind: Line, Text: `"Mara has a secret."`, Present: []string{"Elias", "Mara", "Rook", "Tess"}},
		Event{ID: "01JF", Turn: 15, Actor: "Elias", Kind: Line, Text: `"Has she?"`, Present: []string{"Elias", "Mara", "Rook", "Tess"}},
		Event{ID: "01JG", Turn: 15, Actor: "Rook", Kind: Line, Text: `"I know it."`, Present: []string{"Elias", "Mara", "Rook", "Tess"}},
	)
	tests := []struct {
		name, perception string
		// want is the reason's fragment; "" means the item is kept.
		want string
	}{
		{"told of the whisper by the one whispered to", `{"character":"Elias","event":"01JD","mode":"told","text":"Mara owns the key.","via":"01JE"}`, ""},
		{"told via a whisper to someone else", `{"character":"Elias","event":"01JB","mode":"told","text":"Mara turned the key.","via":"01JD"}`, "did not perceive"},
		{"told via the listener's own line", `{"character":"Elias","event":"01JD","mode":"told","text":"Mara owns the key.","via":"01JF"}`, "listener itself"},
		{"told by one who did not witness it", `{"character":"Elias","event":"01JD","mode":"told","text":"Mara owns the key.","via":"01JG"}`, "did not witness"},
		{"told via an event the listener was not at", `{"character":"Elias","event":"01JA","mode":"told","text":"Tess wanted it open.","via":"01JD"}`, "did not perceive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAnswer(`{"perceptions":[` + tt.perception + `]}`)
			if err != nil {
				t.Fatalf("ParseAnswer: %v", err)
			}
			r := Validate(in, a)
			if tt.want == "" {
				if len(r.Drops) != 0 {
					t.Fatalf("dropped %v, want the perception kept", r.Drops)
				}
				return
			}
			if len(r.Drops) != 1 || r.Drops[0].Section != "perceptions" || !strings.Contains(r.Drops[0].Reason, tt.want) {
				t.Fatalf("drops = %v, want one perception dropped with %q", r.Drops, tt.want)
			}
			for _, p := range r.Perceptions {
				if p.Character == "Elias" && p.Mode == Told {
					t.Errorf("the dropped told perception was installed: %+v", p)
				}
			}
		})
	}
}

// TestDropReasonsQuoteNoStory: a reason names rules and ids, never the
// words of the story, so it may be kept where /forget does not reach.
func TestDropReasonsQuoteNoStory(t *testing.T) {
	t.Parallel()
	secret := "SECRETWORD"
	answer := fmt.Sprintf(`{"changes":[{"turn":99,"text":"%[1]s"}],"perceptions":[{"character":"%[1]s","event":"01JA","mode":"heard","text":"%[1]s"},{"character":"Elias","event":"01JA","mode":"heard","text":"%[1]s"}],"relationships":[{"from":"%[1]s","to":"Mara","description":"%[1]s","event":"01JA"}],"entities":[{"name":"%[1]s","kind":"%[1]s"}],"threads":[{"op":"open","kind":"goal","text":"","event":"01JA"}]}`, secret)
	a, err := ParseAnswer(answer)
	if err != nil {
		t.Fatal(err)
	}
	r := Validate(batch(), a)
	if len(r.Drops) != 6 {
		t.Fatalf("drops = %v, want 6", r.Drops)
	}
	for _, d := range r.Drops {
		if strings.Contains(d.String(), "SECRET") {
			t.Errorf("reason quotes the story: %s", d)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		bad        bool
	}{
		{"plain", `{"events":[]}`, false},
		{"fenced with words around", "Here you go:\n```json\n{\"turns\": []}\n```\nDone.", false},
		{"empty object: nothing changed", `{}`, false},
		{"unknown keys beside known ones", `{"events":[],"mood":"tense"}`, false},
		{"a single name where a list is expected", `{"events":[{"event":"01JA","importance":3,"about":"Mara"}]}`, false},
		{"not JSON", "The gate opens.", true},
		{"broken JSON", `{"events":[{"event":}]}`, true},
		{"a section of the wrong type", `{"events":{"event":"01JA"}}`, true},
		{"only unknown keys", `{"story":"The gate opens."}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAnswer(tt.text)
			if tt.bad != (err != nil) {
				t.Fatalf("err = %v, want bad=%v", err, tt.bad)
			}
			if err != nil && !errors.Is(err, ErrNotContract) {
				t.Fatalf("err = %v, want ErrNotContract", err)
			}
			if err != nil && strings.Contains(err.Error(), "gate") {
				t.Errorf("error quotes the answer: %v", err)
			}
		})
	}
}

// TestPerceiveDefaults: every present cast member perceives each event
// verbatim unless the model says otherwise; away members and absent ones
// perceive nothing unless told.
func TestPerceiveDefaults(t *testing.T) {
	t.Parallel()
	in := batch()
	a, err := ParseAnswer(`{"perceptions":[
		{"character":"Mara","event":"01JA","mode":"none"},
		{"character":"Elias","event":"01JB","mode":"told","text":"Someone opened the gate.","via":"01JC"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	r := Validate(in, a)
	var got []string
	for _, p := range r.Perceptions {
		got = append(got, fmt.Sprintf("%s %s %s %s", p.Event, p.Character, p.Mode, p.Text))
	}
	want := []string{
		"01JB Mara saw *She turns the key.*",
		"01JB Elias told Someone opened the gate.",
		"01JC Elias heard \"Mara opened the gate.\"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("perceptions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPerceiveScalesWithoutTheModel: five present characters, no answer
// about them: each gets every event, and the model wrote nothing.
func TestPerceiveScalesWithoutTheModel(t *testing.T) {
	t.Parallel()
	names := []string{"A", "B", "C", "D", "E"}
	in := Input{}
	for _, n := range names {
		in.Cast = append(in.Cast, CastMember{Name: n})
	}
	for i := range 4 {
		in.Events = append(in.Events, Event{ID: fmt.Sprint(i), Turn: 1, Kind: Line, Text: "x", Present: names})
	}
	if got := len(Perceive(in, nil)); got != 20 {
		t.Errorf("%d perceptions, want 20", got)
	}
}

func TestPromptGolden(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			var b strings.Builder
			for _, m := range Prompt(lang, batch()) {
				fmt.Fprintf(&b, "=== %s\n%s\n", m.Role, m.Content)
			}
			golden.Check(t, filepath.Join("testdata", "prompt_"+lang+".golden"), b.String())
		})
	}
}

func TestViewShowsOnlyWhatTheCharacterKnows(t *testing.T) {
	t.Parallel()
	l := Ledger{
		Time:      "day 3, evening",
		Place:     "the west gate",
		Where:     map[string]string{"Elias": "the tavern"},
		Inventory: map[string][]string{"Mara": {"brass key"}, "Elias": {"letter"}, "Tess": {"lantern"}},
		Flags:     map[string]string{"traitor": "Elias"},
		Threads:   []string{"Who took the key?", "The letter's seal"},
	}
	got := l.View("en", ViewInput{Character: "Mara", Present: []string{"Mara", "Tess", "Elias"},
		Threads: []string{"Who took the key?"}, Known: []string{"the west gate", "the old road"}})
	for _, want := range []string{"day 3, evening", "Where you are: the west gate", "Here with you: Tess", "Mara carries: brass key", "Tess carries: lantern", "Who took the key?", "the old road"} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"letter", "tavern", "traitor", "seal", "Elias"} {
		if strings.Contains(got, leak) {
			t.Errorf("view leaks %q:\n%s", leak, got)
		}
	}
	if !l.Elsewhere("Elias") || l.Elsewhere("Mara") {
		t.Errorf("Elsewhere: Elias %v, Mara %v; want true, false", l.Elsewhere("Elias"), l.Elsewhere("Mara"))
	}
}

func FuzzParseAnswer(f *testing.F) {
	f.Add(`{"turns":[{"turn":12,"story_time":{"day":3,"minute":1300}}],"perceptions":[{"character":"Mara","event":"01JA","mode":"none"}]}`)
	f.Add("```json\n{}\n```")
	f.Add(`{"events":[{"event":"01JB","importance":"7.6","about":"x"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAnswer(s)
		if err != nil {
			return
		}
		r := Validate(batch(), a)
		present := map[string][]string{}
		for _, e := range batch().Events {
			present[e.ID] = e.Present
		}
		for _, p := range r.Perceptions {
			if p.Mode != Told && !contains(present[p.Event], p.Character) {
				t.Fatalf("%s perceived %s directly without being there", p.Character, p.Event)
			}
		}
	})
}

// TestValidateNamesAMemberWithoutItsCardID: a cast member that goes by its
// name with its card id ("Wren (wren-png)") is meant by an answer that
// writes the name alone, unless another member has that name too.
func TestValidateNamesAMemberWithoutItsCardID(t *testing.T) {
	t.Parallel()
	in := batch()
	in.Cast = append(in.Cast, CastMember{Name: "Wren (wren-png)"})
	for i := range in.Events {
		in.Events[i].Present = append(in.Events[i].Present, "Wren (wren-png)")
	}
	a, err := ParseAnswer(`{"perceptions":[{"character":"wren","event":"01JA","mode":"heard","text":"Tess wants it open."}],` +
		`"relationships":[{"from":"Wren","to":"Mara","description":"the keeper's friend","event":"01JA"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	told := func(r Record) string {
		for _, p := range r.Perceptions {
			if p.Text == "Tess wants it open." {
				return p.Character
			}
		}
		return ""
	}
	r := Validate(in, a)
	if len(r.Drops) != 0 || told(r) != "Wren (wren-png)" || len(r.Relationships) != 1 || r.Relationships[0].From != "Wren (wren-png)" {
		t.Fatalf("record %+v: want Wren (wren-png)'s perception and relationship", r)
	}
	in.Cast = append(in.Cast, CastMember{Name: "Wren (wren-json)"})
	if r := Validate(in, a); told(r) != "" || len(r.Drops) != 2 {
		t.Errorf("with two members called Wren: Wren's perception went to %q, drops %v", told(r), r.Drops)
	}
}
