package eval

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Tokens counts what the model calls of a run spent.
type Tokens struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Calls      int `json:"calls"`
}

// Add adds o to t.
func (t *Tokens) Add(o Tokens) {
	t.Prompt += o.Prompt
	t.Completion += o.Completion
	t.Calls += o.Calls
}

// Result is what one case came to.
type Result struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Lang     string `json:"lang"`
	// Waiting lists the features the case needs that troupe lacks; such a
	// case is not played and not scored.
	Waiting []string `json:"waiting,omitempty"`
	Verdict
	// Judge is the judge's score, when --judge asked for one; it then
	// counts instead of Verdict.Score.
	Judge *float64 `json:"judge,omitempty"`
	Reply string   `json:"reply,omitempty"`
	// Err is why the case could not be played to its question (then it
	// scores 0).
	Err string `json:"error,omitempty"`
	// Notes are setup problems that did not stop the case: a planted fact
	// that was not compacted before the question, a line the character was
	// asked to say and did not.
	Notes   []string      `json:"notes,omitempty"`
	Model   Tokens        `json:"model_tokens"`
	Scribe  Tokens        `json:"scribe_tokens"`
	Elapsed time.Duration `json:"-"`
}

// Final is the score that counts: the judge's when there is one.
func (r Result) Final() float64 {
	if r.Judge != nil {
		return *r.Judge
	}
	return r.Score
}

// Group is the score of a set of cases.
type Group struct {
	Cases int     `json:"cases"`
	Score float64 `json:"score"`
	// Waiting counts the cases not played for a missing feature.
	Waiting int `json:"waiting,omitempty"`
	// Errors counts the played cases that did not reach their question
	// (they score 0 and are counted in Cases).
	Errors int `json:"errors"`
	// Model and Scribe are the tokens (prompt and completion) the group's
	// cases spent.
	Model  int `json:"model_tokens"`
	Scribe int `json:"scribe_tokens"`
}

// Report is a whole run, in the shape --json writes.
type Report struct {
	Label  string  `json:"label,omitempty"`
	Model  string  `json:"model"`
	Scribe string  `json:"scribe"`
	Cases  int     `json:"cases"`
	Score  float64 `json:"score"`
	// Errors counts the cases that did not reach their question.
	Errors      int               `json:"errors"`
	ByCategory  map[string]Group  `json:"by_category"`
	ByLanguage  map[string]Group  `json:"by_language"`
	ByBoth      map[string]Group  `json:"by_category_language"`
	Tokens      map[string]Tokens `json:"tokens"`
	WallSeconds float64           `json:"wall_seconds"`
	Results     []Result          `json:"results"`
}

// Summarize aggregates results: a group's score is the mean final score of
// its played cases; cases waiting for a feature count only as waiting.
func Summarize(results []Result, wall time.Duration) Report {
	rep := Report{ByCategory: map[string]Group{}, ByLanguage: map[string]Group{}, ByBoth: map[string]Group{},
		Tokens: map[string]Tokens{}, WallSeconds: wall.Seconds(), Results: results}
	type acc struct {
		group Group
		sum   float64
	}
	accs := map[string]map[string]*acc{"category": {}, "language": {}, "both": {}}
	add := func(kind, key string, r Result) {
		a := accs[kind][key]
		if a == nil {
			a = &acc{}
			accs[kind][key] = a
		}
		if len(r.Waiting) > 0 {
			a.group.Waiting++
			return
		}
		a.group.Model += r.Model.Prompt + r.Model.Completion
		a.group.Scribe += r.Scribe.Prompt + r.Scribe.Completion
		a.group.Cases++
		if r.Err != "" {
			a.group.Errors++
		}
		a.sum += r.Final()
	}
	total := 0.0
	model, scribe := Tokens{}, Tokens{}
	for _, r := range results {
		add("category", r.Category, r)
		add("language", r.Lang, r)
		add("both", r.Category+"/"+r.Lang, r)
		model.Add(r.Model)
		scribe.Add(r.Scribe)
		if len(r.Waiting) == 0 {
			rep.Cases++
			total += r.Final()
		}
		if r.Err != "" {
			rep.Errors++
		}
	}
	for kind, m := range map[string]map[string]Group{"category": rep.ByCategory, "language": rep.ByLanguage, "both": rep.ByBoth} {
		for k, a := range accs[kind] {
			if a.group.Cases > 0 {
				a.group.Score = a.sum / float64(a.group.Cases)
			}
			m[k] = a.group
		}
	}
	if rep.Cases > 0 {
		rep.Score = total / float64(rep.Cases)
	}
	rep.Tokens["model"], rep.Tokens["scribe"] = model, scribe
	return rep
}

// PrintTable writes the reports side by side (one, or two for --compare):
// a row per category and language with its score, cases, errors (cases
// that never reached their question: their 0 is no measurement) and tokens
// (the model's + the scribe's), the totals, the calls and the wall time.
func PrintTable(w io.Writer, reps ...Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"category", "lang"}
	for _, r := range reps {
		label := r.Label
		if label == "" {
			label = "score"
		}
		head = append(head, label, "cases", "errors", "tokens")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	keys := map[string]bool{}
	for _, r := range reps {
		for k := range r.ByBoth {
			keys[k] = true
		}
	}
	rows := make([]string, 0, len(keys))
	for k := range keys {
		rows = append(rows, k)
	}
	sort.Slice(rows, func(i, j int) bool {
		ci, li, _ := strings.Cut(rows[i], "/")
		cj, lj, _ := strings.Cut(rows[j], "/")
		if ci != cj {
			return slices.Index(Categories, ci) < slices.Index(Categories, cj)
		}
		return li < lj
	})
	cell := func(g Group, ok bool) []string {
		switch {
		case !ok:
			return []string{"-", "0", "", ""}
		case g.Cases == 0:
			return []string{"waiting", fmt.Sprintf("(%d)", g.Waiting), "", ""}
		}
		return []string{fmt.Sprintf("%.2f", g.Score), fmt.Sprint(g.Cases), fmt.Sprint(g.Errors), fmt.Sprintf("%d+%d", g.Model, g.Scribe)}
	}
	for _, k := range rows {
		c, l, _ := strings.Cut(k, "/")
		line := []string{c, l}
		for _, r := range reps {
			g, ok := r.ByBoth[k]
			line = append(line, cell(g, ok)...)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	for _, lang := range Languages {
		line := []string{"all", lang}
		for _, r := range reps {
			g, ok := r.ByLanguage[lang]
			line = append(line, cell(g, ok)...)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	line := []string{"all", "all"}
	for _, r := range reps {
		m, sc := r.Tokens["model"], r.Tokens["scribe"]
		line = append(line, fmt.Sprintf("%.2f", r.Score), fmt.Sprint(r.Cases), fmt.Sprint(r.Errors), fmt.Sprintf("%d+%d", m.Prompt+m.Completion, sc.Prompt+sc.Completion))
	}
	fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range reps {
		m, s := r.Tokens["model"], r.Tokens["scribe"]
		label := ""
		if r.Label != "" {
			label = r.Label + ": "
		}
		fmt.Fprintf(w, "%smodel %s: %d calls, %d prompt + %d completion tokens; scribe %s: %d calls, %d + %d tokens; wall time %.1f s\n",
			label, r.Model, m.Calls, m.Prompt, m.Completion, r.Scribe, s.Calls, s.Prompt, s.Completion, r.WallSeconds)
	}
	return nil
}
