package eval_test

import (
	"strings"
	"testing"

	"troupe/eval"
	"troupe/fakes/openaitest"
)

const suiteDir = "../examples/eval"

func TestSuiteCoversEveryCategoryInBothLanguages(t *testing.T) {
	s, err := eval.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) < 60 {
		t.Errorf("got %d cases, want at least 60", len(s.Cases))
	}
	for _, lang := range eval.Languages {
		for _, cat := range eval.Categories {
			if n := len(s.Select(lang, cat)); n < 3 {
				t.Errorf("%s/%s: got %d cases, want at least 3", lang, cat, n)
			}
		}
	}
}

// A faithful reader given every line of a story answers its question
// (except where the answer needs reckoning, not reading), and tells the
// forgotten fact when it is still in the prompt: the cases are answerable
// exactly when troupe puts their facts in the prompt.
func TestSuiteIsAnswerableFromItsOwnStory(t *testing.T) {
	s, err := eval.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cases {
		t.Run(c.ID, func(t *testing.T) {
			var lines []string
			for _, turn := range s.Turns(c) {
				if !turn.Command && !turn.Idle {
					lines = append(lines, turn.Text)
				}
				// The character's scripted reply that is kept: the last,
				// after every /regen.
				if n := len(turn.Replies); n > 0 {
					lines = append(lines, turn.Replies[n-1])
				}
			}
			reply := openaitest.Read(lines, c.Ask)
			v := eval.Score(c, reply, s.F1)
			switch {
			case c.ID == "en-temporal-captain" || c.ID == "zh-temporal-captain":
				if v.Score != 0 {
					t.Errorf("a quoting reader answered a reckoning question: %q", reply)
				}
			case c.Category == eval.Forgetting || c.Category == eval.Perspective || strings.HasSuffix(c.ID, "-temporal-faded"):
				// A faded case's detail, still in the prompt, is told.
				if v.Score != 0 {
					t.Errorf("with the fact in the prompt the reader said %q (%s), want a forbidden answer: the case could never fail", reply, v.Why)
				}
			default:
				if v.Score != 1 {
					t.Errorf("reader said %q: %s", reply, v.Why)
				}
			}
		})
	}
}

func TestFillerIsSeededAndAnswersNothing(t *testing.T) {
	s, err := eval.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Select("en", eval.SingleFact)[0]
	a, b := s.Turns(c), s.Turns(c)
	if len(a) != 6 || a[1].Text != b[1].Text || a[1].Text == "" || strings.Contains(a[1].Text, "{") {
		t.Fatalf("filler turns: %+v", a)
	}
	c.Seed = 12345
	if d := s.Turns(c); d[1].Text == a[1].Text && d[2].Text == a[2].Text && d[3].Text == a[3].Text {
		t.Errorf("another seed gave the same filler: %q", d[1].Text)
	}
	for _, c := range s.Cases {
		var filler []string
		for _, turn := range s.Turns(eval.Case{ID: c.ID, Lang: c.Lang, Story: []eval.Step{{Filler: 20}}}) {
			filler = append(filler, turn.Text)
		}
		if got := openaitest.Read(filler, c.Ask); got != openaitest.ReaderUnknown && got != openaitest.ReaderUnknownZH {
			t.Errorf("%s: filler alone answers %q with %q", c.ID, c.Ask, got)
		}
	}
}

func TestLoadRejectsBadCases(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/suite.yaml", "cards: {en: a.json, zh: b.json}\nfiller:\n  en: {templates: [x], actions: [a], things: [b], places: [c]}\n  zh: {templates: [x], actions: [a], things: [b], places: [c]}\n")
	write(t, dir+"/en/bad.yaml", `
- id: a
  category: nonsense
  story: [hello]
  ask: "?"
  gold: [x]
- id: a
  category: abstention
  story: [{say: hi, filler: 2}]
  ask: "what?"
`)
	_, err := eval.Load(dir)
	if err == nil {
		t.Fatal("a bad suite loaded")
	}
	for _, want := range []string{`unknown category "nonsense"`, "used twice", "needs forbidden answers", "exactly one of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
