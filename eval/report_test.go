package eval_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"troupe/eval"
)

func TestSummarizeAndTable(t *testing.T) {
	judged := 0.0
	results := []eval.Result{
		{ID: "a", Category: eval.SingleFact, Lang: "en", Verdict: eval.Verdict{Score: 1}, Model: eval.Tokens{Prompt: 100, Completion: 10, Calls: 2}, Scribe: eval.Tokens{Prompt: 50, Completion: 5, Calls: 1}},
		{ID: "b", Category: eval.SingleFact, Lang: "zh", Verdict: eval.Verdict{Score: 1}, Judge: &judged},
		{ID: "c", Category: eval.Forgetting, Lang: "en", Verdict: eval.Verdict{Score: 1}},
		{ID: "d", Category: eval.Perspective, Lang: "en", Waiting: []string{eval.FeatureScenes}},
	}
	rep := eval.Summarize(results, 2*time.Second)
	if rep.Cases != 3 || rep.Score < 0.66 || rep.Score > 0.67 {
		t.Errorf("cases %d score %v, want 3 and 2/3 (the judge's 0 counts, the waiting case does not)", rep.Cases, rep.Score)
	}
	if g := rep.ByCategory[eval.SingleFact]; g.Cases != 2 || g.Score != 0.5 || g.Model != 110 || g.Scribe != 55 {
		t.Errorf("single_fact = %+v", g)
	}
	if g := rep.ByCategory[eval.Perspective]; g.Cases != 0 || g.Waiting != 1 {
		t.Errorf("perspective = %+v", g)
	}
	if g := rep.ByLanguage["en"]; g.Cases != 2 || g.Score != 1 {
		t.Errorf("en = %+v", g)
	}
	if tok := rep.Tokens["model"]; tok.Calls != 2 || tok.Prompt != 100 {
		t.Errorf("tokens = %+v", rep.Tokens)
	}
	var b bytes.Buffer
	other := rep
	other.Label = "memory.period=0"
	if err := eval.PrintTable(&b, rep, other); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"single_fact", "waiting", "memory.period=0", "0.67", "110+55", "wall time 2.0 s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// A case that never reached its question is counted as an error in its
// groups, in the report and in the table's errors column.
func TestSummarizeCountsErrors(t *testing.T) {
	results := []eval.Result{
		{ID: "a", Category: eval.SingleFact, Lang: "en", Verdict: eval.Verdict{Score: 1}},
		{ID: "b", Category: eval.SingleFact, Lang: "en", Err: "over the case time limit"},
	}
	rep := eval.Summarize(results, time.Second)
	if rep.Errors != 1 || rep.ByCategory[eval.SingleFact].Errors != 1 || rep.ByLanguage["en"].Errors != 1 {
		t.Errorf("errors: report %d, single_fact %+v, en %+v; want 1 each", rep.Errors, rep.ByCategory[eval.SingleFact], rep.ByLanguage["en"])
	}
	var b bytes.Buffer
	if err := eval.PrintTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	head, rows, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(head, "errors") {
		t.Errorf("table head lacks an errors column: %q", head)
	}
	for _, l := range strings.Split(rows, "\n") {
		if f := strings.Fields(l); len(f) == 6 && f[0] == eval.SingleFact && f[4] != "1" {
			t.Errorf("single_fact row %q: errors %q, want 1", l, f[4])
		}
	}
}
