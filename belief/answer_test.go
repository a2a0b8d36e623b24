package belief

import (
	"encoding/json"
	"errors"
	stdreflect "reflect"
	"slices"
	"testing"
)

func TestParseAnswerTolerance(t *testing.T) {
	t.Parallel()
	const obj = `{"add":[{"text":"Tess hides things.","supports":["p1","p2"]}],"drop":[{"belief":"b5","because":["p7"]}]}`
	tests := []struct {
		name string
		text string
	}{
		{"bare", obj},
		{"code fence", "```json\n" + obj + "\n```"},
		{"text around", "Here is what Mara now believes:\n" + obj + "\nLet me know if you need more."},
		{"braces before", "Thinking {not json} first.\n" + obj},
		{"unknown keys", `{"note":"ok","add":[{"text":"Tess hides things.","supports":["p1","p2"],"mood":"grim"}],"drop":[{"belief":"b5","because":["p7"]}]}`},
		{"upper-case keys", `{"Add":[{"Text":"Tess hides things.","Supports":["p1","p2"]}],"DROP":[{"Belief":"b5","Because":["p7"]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := ParseAnswer(tc.text)
			if err != nil {
				t.Fatalf("ParseAnswer: %v", err)
			}
			if len(a.Add) != 1 || a.Add[0].Text != "Tess hides things." || !slices.Equal(a.Add[0].Supports, IDs{"p1", "p2"}) {
				t.Errorf("add: got %+v", a.Add)
			}
			if len(a.Drop) != 1 || a.Drop[0].Belief != "b5" || !slices.Equal(a.Drop[0].Because, IDs{"p7"}) {
				t.Errorf("drop: got %+v", a.Drop)
			}
			if len(a.Strengthen)+len(a.Doubt)+len(a.Merge)+len(a.Malformed) != 0 {
				t.Errorf("got extra items: %+v", a)
			}
		})
	}
}

func TestParseAnswerEmptyMeansNothing(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`{}`, `{"add":[],"drop":null}`, "```\n{}\n```"} {
		a, err := ParseAnswer(text)
		if err != nil {
			t.Errorf("ParseAnswer(%q): %v, want an empty answer", text, err)
		}
		if ch, notes := Validate(scene(), a); !ch.Empty() || len(notes) != 0 {
			t.Errorf("ParseAnswer(%q) changes %v, notes %v; want none", text, ch, notes)
		}
	}
}

func TestParseAnswerNotTheContract(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"",
		"I would rather not.",
		"```json\n{\"add\": [\n```",
		`["add"]`,
		`{"beliefs":[{"text":"Tess lies."}]}`,
		`{"compatible": true}`,
	} {
		if _, err := ParseAnswer(text); !errors.Is(err, ErrAnswer) {
			t.Errorf("ParseAnswer(%q) error = %v, want ErrAnswer", text, err)
		}
	}
}

func TestParseCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text       string
		compatible bool
		against    []string
	}{
		{`{"compatible": true, "against": []}`, true, nil},
		{"```json\n{\"compatible\": false, \"against\": [\"p7\"]}\n```", false, []string{"p7"}},
		{`They conflict: {"compatible": "false", "against": ["p:p2", "p7"]} as shown.`, false, []string{"p2", "p7"}},
		{`{"against": ["p7"]}`, false, []string{"p7"}},
		{`{"compatible": true, "reason": "fine"}`, true, nil},
	}
	for _, tc := range tests {
		a, err := ParseCheck(tc.text)
		if err != nil {
			t.Errorf("ParseCheck(%q): %v", tc.text, err)
			continue
		}
		if a.Compatible != tc.compatible || !slices.Equal([]string(a.Against), tc.against) {
			t.Errorf("ParseCheck(%q) = %+v, want compatible %v against %v", tc.text, a, tc.compatible, tc.against)
		}
	}
	for _, text := range []string{"", "no", `{"ok": true}`, `{"compatible": "perhaps"}`, `{"compatible": false, "against": {"p": 1}}`} {
		if _, err := ParseCheck(text); !errors.Is(err, ErrAnswer) {
			t.Errorf("ParseCheck(%q) error = %v, want ErrAnswer", text, err)
		}
	}
}

// FuzzParseAnswer: the answer is model output, so anything may come back.
// Parsing and validating never panic, parsing is stable, and whatever is
// accepted obeys the rules.
func FuzzParseAnswer(f *testing.F) {
	f.Add(`{"add":[{"text":"Tess hides things.","confidence":"sure","supports":["p1","p2"],"against":["p3"],"about":["Tess"]}]}`)
	f.Add("```json\n{\"strengthen\":{\"belief\":\"b:b1\",\"supports\":\"p7\"},\"doubt\":[{\"belief\":\"b2\",\"against\":[\"p4\"]}]}\n```")
	f.Add(`Sure! {"merge":[{"beliefs":["b1","b5","b1"],"text":"x","confidence":"sure","supports":[7]}],"drop":[{"belief":"b5","because":["p7"]}]} done`)
	f.Add(`{"add":["x",{"text":null}],"drop":5,"doubt":{"belief":["b2"]}}`)
	f.Add(`{{{{"add":[`)
	f.Add(`{"compatible": false, "against": ["p7"]}`)
	f.Fuzz(func(t *testing.T, text string) {
		a, err := ParseAnswer(text)
		b, err2 := ParseAnswer(text)
		if (err == nil) != (err2 == nil) || len(a.Add) != len(b.Add) || len(a.Malformed) != len(b.Malformed) {
			t.Fatalf("ParseAnswer is not stable on %q", text)
		}
		if err != nil {
			if !errors.Is(err, ErrAnswer) {
				t.Fatalf("error %v does not wrap ErrAnswer", err)
			}
			return
		}
		r := scene()
		ch, _ := Validate(r, a)
		shown := map[string]Perception{}
		for _, p := range r.Perceptions {
			shown[p.ID] = p
		}
		for _, nb := range ch.Created {
			if !nb.Confidence.Valid() || nb.Text == "" {
				t.Fatalf("created %+v", nb)
			}
			if nb.Confidence == Sure && nb.supportTurns() < 2 {
				t.Fatalf("created sure from one turn: %+v", nb)
			}
			if fieldIn(nb.Text, nil) != "" {
				t.Fatalf("created a text with a field: %q", nb.Text)
			}
		}
		for _, fo := range ch.Folded {
			if _, ok := shown[fo.Perception]; !ok && len(ch.Deleted) == 0 {
				t.Fatalf("folded a perception that was not shown: %+v", fo)
			}
		}
		if _, err := ParseCheck(text); err != nil && !errors.Is(err, ErrAnswer) {
			t.Fatalf("ParseCheck error %v does not wrap ErrAnswer", err)
		}
	})
}

// TestAnswerRoundTrip: an Answer marshals to the contract's shape (what a
// scripted fake model sends) and parses back to itself.
func TestAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	in := Answer{
		Add:        []Add{{Text: "Tess hides things.", Confidence: "likely", Supports: IDs{"p1", "p2"}, Against: IDs{"p3"}, About: Names{"Tess", "the brass key"}}},
		Strengthen: []Strengthen{{Belief: "b1", Supports: IDs{"p7"}}},
		Doubt:      []Doubt{{Belief: "b2", Against: IDs{"p4"}}},
		Merge:      []Merge{{Beliefs: IDs{"b8", "b9"}, Text: "Elias keeps his word.", Confidence: "sure", Supports: IDs{"p6"}}},
		Drop:       []Drop{{Belief: "b5", Because: IDs{"p7"}}},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseAnswer(string(raw))
	if err != nil {
		t.Fatalf("ParseAnswer(%s): %v", raw, err)
	}
	if !stdreflect.DeepEqual(out, in) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v\nJSON %s", out, in, raw)
	}
}
