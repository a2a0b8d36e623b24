package eval_test

import (
	"os"
	"path/filepath"
	"testing"

	"troupe/eval"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Ｔｏｍａｓ！", "tomas"},
		{"  The OLD   mill, at dawn. ", "the old mill at dawn"},
		{"“红隼”。", "红隼"},
		{"四十二　枚", "四十二 枚"},
		{"forty-two", "forty two"},
	} {
		if got := eval.Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	fact := eval.Case{Category: eval.SingleFact, Gold: []string{"Tomas"}}
	upd := eval.Case{Category: eval.Update, Gold: []string{"kestrel"}, Forbidden: []string{"heron"}}
	abst := eval.Case{Category: eval.Abstention, Forbidden: []string{"owl"}}
	zh := eval.Case{Category: eval.SingleFact, Gold: []string{"托马斯"}}
	for _, tc := range []struct {
		name  string
		c     eval.Case
		reply string
		want  float64
	}{
		{"gold contained", fact, "His name is TOMAS.", 1},
		{"gold missing", fact, "I don't know.", 0},
		{"gold by F1", fact, "Thomas", 1},
		{"word boundary", fact, "Tomasz is here", 0},
		{"newer wins", upd, "It is kestrel now.", 1},
		{"older came back", upd, "It was heron, now kestrel.", 0},
		{"abstained", abst, "I don't know.", 1},
		{"owl inside bowl is no owl", abst, "A bowl of soup.", 1},
		{"invented", abst, "An owl!", 0},
		{"full-width chinese", zh, "他叫托马斯。", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval.Score(tc.c, tc.reply, eval.DefaultF1); got.Score != tc.want {
				t.Errorf("Score(%q) = %v (%s), want %v", tc.reply, got.Score, got.Why, tc.want)
			}
		})
	}
}

func TestJudgeRoundTrip(t *testing.T) {
	for _, lang := range eval.Languages {
		c := eval.Case{Lang: lang, Category: eval.Update, Ask: "Q?", Gold: []string{"kestrel", "红隼"}, Forbidden: []string{"heron"}}
		msgs := eval.JudgePrompt(c, "It is heron.")
		got, reply, ok := eval.JudgeCase(msgs[0].Content, msgs[1].Content)
		if !ok || reply != "It is heron." || len(got.Gold) != 2 || got.Forbidden[0] != "heron" || got.Lang != lang {
			t.Errorf("%s: JudgeCase = %+v %q %v", lang, got, reply, ok)
		}
	}
	for _, tc := range []struct {
		answer string
		want   float64
		err    bool
	}{
		{"Right.\nVERDICT: PASS", 1, false},
		{"VERDICT: PASS?\nno wait.\nVERDICT: FAIL", 0, false},
		{"理由。\n结论：通过", 1, false},
		{"结论：不通过", 0, false},
		{"maybe", 0, true},
	} {
		got, err := eval.ParseVerdict(tc.answer)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseVerdict(%q) = %v, %v", tc.answer, got, err)
		}
	}
}

// A forgetting case that also names gold (another chat's fact beside the
// forgotten one) needs it: silence is not enough.
func TestScoreMustNotTellWithGoldNeedsIt(t *testing.T) {
	c := eval.Case{Category: eval.Forgetting, Gold: []string{"bees"}, Forbidden: []string{"Dunmore"}}
	for reply, want := range map[string]float64{
		"He keeps bees on the hill.":         1,
		"I don't know.":                      0,
		"He sells honey at the Dunmore fair": 0,
	} {
		if v := eval.Score(c, reply, 0.6); v.Score != want {
			t.Errorf("%q scored %v (%s), want %v", reply, v.Score, v.Why, want)
		}
	}
	c.Gold = nil
	if v := eval.Score(c, "I don't know.", 0.6); v.Score != 1 {
		t.Errorf("without gold, silence scored %v", v.Score)
	}
}
