package belief

import (
	"fmt"
	"slices"
	"testing"
)

func checkIDs(cs []Check) []string {
	var out []string
	for _, c := range cs {
		ids := ""
		for _, p := range c.Perceptions {
			ids += " " + p.ID
		}
		out = append(out, c.Belief.ID+":"+ids)
	}
	return out
}

func TestSelectChecks(t *testing.T) {
	t.Parallel()
	beliefs := []Belief{
		{ID: "bk", Text: "Tess hides the brass key.", About: []string{"Tess", "brass key"}, ChangedTurn: 5},
		{ID: "bl", Text: "Elias fears the lighthouse.", About: []string{"Elias", "lighthouse"}, ChangedTurn: 5},
		{ID: "bm", Text: "Tess likes tea.", About: []string{"Tess"}, ChangedTurn: 5},
		{ID: "bn", Text: "The brass key opens the vault.", About: []string{"brass key"}, ChangedTurn: 25},
		{ID: "bo", Text: "Mara owes the ferryman.", About: []string{"ferryman"}, ChangedTurn: 5},
	}
	fresh := []Perception{
		{ID: "n1", Turn: 10, Text: "Tess moved the brass key to the cellar.", About: []string{"Tess", "brass key"}},
		{ID: "n2", Turn: 11, Text: "Tess poured wine for Elias at the lighthouse.", About: []string{"Tess", "Elias", "lighthouse"}},
		{ID: "n3", Turn: 12, Text: "Tess sang by the fire.", About: []string{"Tess"}},
	}
	var known []Perception
	for i := range 6 {
		known = append(known, Perception{ID: fmt.Sprint("k", i), Turn: int64(i + 1), Text: fmt.Sprintf("Tess talked of day %d.", i), About: []string{"Tess"}})
	}
	tests := []struct {
		name string
		in   CheckInput
		want []string
	}{
		{"related by rare names and words, not by the name every perception shares",
			CheckInput{Beliefs: beliefs, New: fresh, Known: known, Max: defaults.MaxChecks},
			[]string{"bl: n2", "bk: n1"}},
		{"at most max_checks, most related first",
			CheckInput{Beliefs: beliefs, New: fresh, Known: known, Max: 1},
			[]string{"bl: n2"}},
		{"max_checks below zero checks nothing",
			CheckInput{Beliefs: beliefs, New: fresh, Known: known, Max: -1},
			nil},
		{"max_checks zero checks nothing",
			CheckInput{Beliefs: beliefs, New: fresh, Known: known},
			nil},
		{"no new perceptions, nothing to check",
			CheckInput{Beliefs: beliefs, Known: known, Max: defaults.MaxChecks},
			nil},
		{"Chinese by character bigrams",
			CheckInput{
				Beliefs: []Belief{
					{ID: "z1", Text: "苏砚藏起了铜钥匙。", ChangedTurn: 1},
					{ID: "z2", Text: "沈先生怕水。", ChangedTurn: 1},
					{ID: "z3", Text: "苏砚是个好人。", ChangedTurn: 1},
				},
				New: []Perception{
					{ID: "c1", Turn: 3, Text: "苏砚把铜钥匙交给了阿澜。"},
					{ID: "c2", Turn: 4, Text: "苏砚在窗下弹琴。"},
				},
				Max: defaults.MaxChecks,
			},
			[]string{"z1: c1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := checkIDs(SelectChecks(tc.in)); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSelectChecksDefaultMax(t *testing.T) {
	t.Parallel()
	words := []string{"lantern", "anchor", "ledger", "compass", "orchard", "violin", "saddle", "mirror"}
	var beliefs []Belief
	var fresh, known []Perception
	for i, w := range words {
		beliefs = append(beliefs, Belief{ID: fmt.Sprint("b", i), Text: "The " + w + " matters."})
		fresh = append(fresh, Perception{ID: fmt.Sprint("n", i), Turn: 2, Text: "Someone took the " + w + "."})
		known = append(known, Perception{ID: fmt.Sprint("k", i), Turn: 1, Text: fmt.Sprint("Rain on day ", i)})
	}
	if got := len(SelectChecks(CheckInput{Beliefs: beliefs, New: fresh, Known: known, Max: defaults.MaxChecks})); got != defaults.MaxChecks {
		t.Errorf("got %d checks, want the default %d", got, defaults.MaxChecks)
	}
}

func TestApplyCheck(t *testing.T) {
	t.Parallel()
	contradicts := CheckAnswer{Compatible: false, Against: IDs{"p4"}}
	t.Run("lowers one level and links the contradiction", func(t *testing.T) {
		t.Parallel()
		got, doubted := ApplyCheck(Check{Belief: b2, Perceptions: []Perception{p4, p6}}, contradicts)
		if !doubted || got.Confidence != Likely || !got.links("p4", Contradicts) || got.ChangedTurn != 15 {
			t.Errorf("got %+v doubted %v, want likely, p4 against, changed at 15", got, doubted)
		}
		if b2.Confidence != Sure || b2.links("p4", Contradicts) {
			t.Errorf("ApplyCheck changed its input: %+v", b2)
		}
	})
	t.Run("a retried run does not lower twice", func(t *testing.T) {
		t.Parallel()
		once, _ := ApplyCheck(Check{Belief: b2, Perceptions: []Perception{p4}}, contradicts)
		twice, doubted := ApplyCheck(Check{Belief: once, Perceptions: []Perception{p4}}, contradicts)
		if doubted || twice.Confidence != Likely || len(twice.Evidence) != len(once.Evidence) {
			t.Errorf("second apply: got %+v doubted %v, want it unchanged at likely", twice, doubted)
		}
		// A retried run re-selects from the stored belief: the recorded
		// contradiction is no longer newer than it, so it is not asked again.
		again := SelectChecks(CheckInput{Beliefs: []Belief{once}, New: []Perception{p4}, Max: defaults.MaxChecks})
		if len(again) != 0 {
			t.Errorf("re-selected %q for a contradiction already recorded", checkIDs(again))
		}
	})
	t.Run("never below doubtful", func(t *testing.T) {
		t.Parallel()
		got, doubted := ApplyCheck(Check{Belief: b3, Perceptions: []Perception{p5}}, CheckAnswer{Against: IDs{"p5"}})
		if !doubted || got.Confidence != Doubtful || !got.links("p5", Contradicts) {
			t.Errorf("got %+v doubted %v, want doubtful with p5 against", got, doubted)
		}
	})
	t.Run("compatible changes nothing", func(t *testing.T) {
		t.Parallel()
		got, doubted := ApplyCheck(Check{Belief: b2, Perceptions: []Perception{p4}}, CheckAnswer{Compatible: true, Against: IDs{"p4"}})
		if doubted || got.Confidence != Sure || len(got.Evidence) != len(b2.Evidence) {
			t.Errorf("got %+v doubted %v, want b2 unchanged", got, doubted)
		}
	})
	t.Run("a perception outside the check changes nothing", func(t *testing.T) {
		t.Parallel()
		got, doubted := ApplyCheck(Check{Belief: b2, Perceptions: []Perception{p6}}, contradicts)
		if doubted || got.Confidence != Sure {
			t.Errorf("got %+v doubted %v, want b2 unchanged", got, doubted)
		}
	})
}

// TestCheckThenReflect runs a round the way the caller will: the check
// doubts a belief, and the reflection may not touch it again this round
// while the new information still goes into a new belief.
func TestCheckThenReflect(t *testing.T) {
	t.Parallel()
	r := Round{Perceptions: []Perception{p1, p2, p4, p6}, Beliefs: []Belief{b1, b2, b3}, PivotalImportance: defaults.PivotalImportance}
	var known []Perception // the rest of Mara's perceptions: they make names rare or common
	for i := range 6 {
		known = append(known, Perception{ID: fmt.Sprint("k", i), Turn: int64(i + 1), Text: fmt.Sprint("Rain fell on the harbour, day ", i)})
	}
	in := CheckInput{Beliefs: r.Beliefs, New: r.Perceptions, Known: known, Max: defaults.MaxChecks}
	var results []CheckResult
	for _, c := range SelectChecks(in) {
		a := CheckAnswer{Compatible: true}
		if c.Belief.ID == "b2" {
			a = CheckAnswer{Against: IDs{"p4"}}
		}
		results = append(results, CheckResult{Check: c, Answer: a})
	}
	after, doubted := ApplyChecks(r.Beliefs, results)
	if len(doubted) != 1 || doubted[0].ID != "b2" || doubted[0].Confidence != Likely {
		t.Fatalf("doubted %+v, want b2 lowered to likely (checks %q)", doubted, checkIDs(SelectChecks(in)))
	}
	if after[1].Confidence != Likely || r.Beliefs[1].Confidence != Sure {
		t.Fatalf("ApplyChecks: after %+v, input %+v; want the copy lowered, the input untouched", after[1], r.Beliefs[1])
	}
	r.Beliefs, r.Doubted = after, []string{doubted[0].ID}
	a, err := ParseAnswer(`{"doubt":[{"belief":"b2","against":["p4"]}],"drop":[{"belief":"b2","because":["p6"]}],
		"add":[{"text":"Elias has a violent side.","supports":["p4"],"about":["Elias"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	ch, notes := Validate(r, a)
	wantNotes := []string{"doubt[0] dropped: " + string(ReasonDoubtedThisRound), "drop[0] dropped: " + string(ReasonDoubtedThisRound)}
	if got := noteLines(notes); !slices.Equal(got, wantNotes) {
		t.Errorf("notes: got %q, want %q", got, wantNotes)
	}
	if got, want := summary(ch), []string{"create new-1 likely +p4 @15/15 about=Elias"}; !slices.Equal(got, want) {
		t.Errorf("changes: got %q, want %q", got, want)
	}
}

// TestSelectChecksCorpus: a corpus the caller keeps selects what passing
// every perception does.
func TestSelectChecksCorpus(t *testing.T) {
	t.Parallel()
	beliefs := []Belief{
		{ID: "bk", Text: "Tess hides the brass key.", About: []string{"Tess", "brass key"}},
		{ID: "bl", Text: "Elias fears the lighthouse.", About: []string{"Elias", "lighthouse"}},
		{ID: "bm", Text: "Tess likes tea.", About: []string{"Tess"}},
	}
	fresh := []Perception{
		{ID: "n1", Turn: 10, Text: "Tess moved the brass key to the cellar.", About: []string{"Tess", "brass key"}},
		{ID: "n2", Turn: 11, Text: "Tess poured wine for Elias at the lighthouse.", About: []string{"Tess", "Elias", "lighthouse"}},
	}
	known := []Perception{fresh[0]}
	corpus := NewCorpus()
	for i := range 6 {
		p := Perception{ID: fmt.Sprint("k", i), Text: fmt.Sprintf("Tess talked of day %d.", i), About: []string{"Tess"}}
		known = append(known, p)
		corpus.Add(p.Text, p.About)
	}
	for _, p := range fresh {
		corpus.Add(p.Text, p.About)
	}
	for _, b := range beliefs {
		corpus.Add(b.Text, b.About)
	}
	byKnown := checkIDs(SelectChecks(CheckInput{Beliefs: beliefs, New: fresh, Known: known, Max: defaults.MaxChecks}))
	byCorpus := checkIDs(SelectChecks(CheckInput{Beliefs: beliefs, New: fresh, Corpus: corpus, Max: defaults.MaxChecks}))
	if want := []string{"bl: n2", "bk: n1"}; !slices.Equal(byKnown, want) || !slices.Equal(byCorpus, want) {
		t.Errorf("by known perceptions %q, by corpus %q; want %q", byKnown, byCorpus, want)
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"The Brass key, and THE brass KEY!", []string{"brass", "key"}},
		{"苏砚的铜钥匙", []string{"的铜", "砚的", "苏砚", "钥匙", "铜钥"}},
		{"Tess说：好。", []string{"tess", "好", "说"}},
		{"a I x", []string{}},
	}
	for _, tc := range tests {
		if got := Terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// benchScene is one character deep into a story: 60 beliefs, 20 new
// perceptions, 5000 older ones.
func benchScene() CheckInput {
	words := []string{"lantern", "anchor", "ledger", "compass", "orchard", "violin", "saddle", "mirror", "harbour", "letter"}
	in := CheckInput{Max: defaults.MaxChecks}
	for i := range 60 {
		in.Beliefs = append(in.Beliefs, Belief{ID: fmt.Sprint("b", i), Text: fmt.Sprintf("Tess keeps the %s near the %s.", words[i%10], words[(i/10)%10]), About: []string{"Tess", words[i%10]}})
	}
	for i := range 20 {
		in.New = append(in.New, Perception{ID: fmt.Sprint("n", i), Turn: 5001 + int64(i), Text: fmt.Sprintf("Tess moved the %s to the cellar on day %d.", words[i%10], i), About: []string{"Tess", words[i%10]}})
	}
	for i := range 5000 {
		in.Known = append(in.Known, Perception{ID: fmt.Sprint("k", i), Turn: int64(i), Text: fmt.Sprintf("Tess spoke with the ferryman about rain, day %d, hour %d.", i/24, i%24), About: []string{"Tess", "ferryman"}})
	}
	return in
}

func BenchmarkSelectChecksKnown(b *testing.B) {
	in := benchScene()
	for b.Loop() {
		SelectChecks(in)
	}
}

func BenchmarkSelectChecksCorpus(b *testing.B) {
	in := benchScene()
	in.Corpus = NewCorpus()
	for _, p := range append(in.Known, in.New...) {
		in.Corpus.Add(p.Text, p.About)
	}
	for _, bl := range in.Beliefs {
		in.Corpus.Add(bl.Text, bl.About)
	}
	in.Known = nil
	for b.Loop() {
		SelectChecks(in)
	}
}

func TestPromptBeliefs(t *testing.T) {
	t.Parallel()
	var beliefs []Belief
	for i := range 6 {
		beliefs = append(beliefs, Belief{ID: fmt.Sprint("b", i), Text: fmt.Sprintf("Rain on day %d.", i), ChangedTurn: int64(i)})
	}
	beliefs[1] = Belief{ID: "b1", Text: "The lantern is cursed.", About: []string{"lantern"}, ChangedTurn: 1}
	fresh := []Perception{{ID: "n1", Turn: 2, Text: "The lantern flickered.", About: []string{"lantern"}}}
	var known []Perception
	for i := range 6 {
		known = append(known, Perception{ID: fmt.Sprint("k", i), Text: fmt.Sprint("Wind, day ", i)})
	}
	got := PromptBeliefs(CheckInput{Beliefs: beliefs, New: fresh, Known: known}, 3)
	var ids []string
	for _, b := range got {
		ids = append(ids, b.ID)
	}
	// b1 is related to the new perception; b5 and b4 are the most
	// recently changed of the rest.
	if want := []string{"b1", "b4", "b5"}; !slices.Equal(ids, want) {
		t.Errorf("got %q, want %q", ids, want)
	}
	if all := PromptBeliefs(CheckInput{Beliefs: beliefs, New: fresh}, 0); len(all) != len(beliefs) {
		t.Errorf("under the default limit: got %d beliefs, want all %d", len(all), len(beliefs))
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	ps := []Perception{{ID: "c", Turn: 9}, {ID: "a", Turn: 2}, {ID: "b", Turn: 5}, {ID: "a2", Turn: 2}}
	var ids []string
	for _, p := range Batch(ps, 3) {
		ids = append(ids, p.ID)
	}
	if want := []string{"a", "a2", "b"}; !slices.Equal(ids, want) {
		t.Errorf("got %q, want the oldest three %q", ids, want)
	}
	if ps[0].ID != "c" {
		t.Error("Batch reordered its input")
	}
}
