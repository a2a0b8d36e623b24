package recall

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"Where did I bury the compass?", []string{"where", "did", "bury", "the", "compass"}},
		{"罗盘埋在老槐树下", []string{"罗盘", "盘埋", "埋在", "在老", "老槐", "槐树", "树下"}},
		{"Mara把罗盘给了Tess。", []string{"mara", "把罗", "罗盘", "盘给", "给了", "tess"}},
		{"门", []string{"门"}},
		{"a b c", nil},
	}
	for _, tt := range tests {
		if got := Terms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	// A two-character word in a question finds the sentence that holds it.
	q, doc := termSet("罗盘在哪儿？"), termSet("我把罗盘埋在老槐树下了。")
	if Overlap(q, doc) == 0 {
		t.Errorf("罗盘 in the question does not match the perception")
	}
}

const day = MinutesPerDay

func TestRetentionFollowsStoryTime(t *testing.T) {
	t.Parallel()
	on := Fading{On: true, FoldedFade: 0.5}
	it := Item{Importance: 5, StoryMinute: 10 * day}
	evening := Retention(it, 10*day+3*60, on) // twenty turns in one evening
	month := Retention(it, 40*day, on)        // a one-month jump
	if !(month < evening) || evening < 0.95 {
		t.Errorf("retention after an evening %.3f, after a month %.3f; want the month to fade more and the evening barely", evening, month)
	}
	important := it
	important.Importance = 9
	if Retention(important, 40*day, on) <= month {
		t.Errorf("an important item fades as fast as an ordinary one")
	}
	recalled := it
	recalled.Recalls = 5
	if Retention(recalled, 40*day, on) <= month {
		t.Errorf("an often recalled item fades as fast as one never recalled")
	}
	folded := it
	folded.FoldedInto = "b1"
	if Retention(folded, 20*day, on) >= Retention(it, 20*day, on) {
		t.Errorf("a folded perception does not fade faster")
	}
	if got := Retention(it, 400*day, Fading{}); got != 1 {
		t.Errorf("fading off: retention %v, want 1", got)
	}
}

func cand(id, text string, imp int, minute int64, rel float64) Candidate {
	return Candidate{Item: Item{ID: id, Kind: Perception, Text: text, Gist: "gist of " + id, Importance: imp, StoryMinute: minute, Mode: "saw"}, Relevance: rel}
}

func picked(ss []Scored) []string {
	var out []string
	for _, s := range ss {
		if s.Picked {
			out = append(out, s.ID)
		}
	}
	return out
}

func TestMMRPrefersVarietyOverNearDuplicates(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.MaxItems = 2
	cands := []Candidate{
		cand("a", "Tess buried the brass compass under the old oak", 6, 0, 0.9),
		cand("b", "Tess buried the brass key under the old oak", 6, 0, 0.88),
		cand("c", "The ferrywoman wants silver for the crossing", 6, 0, 0.7),
	}
	if got := picked(Select(cands, p)); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("picked %v, want [a c]: the look-alike b gives way", got)
	}
	p.Lambda = 1
	if got := picked(Select(cands, p)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("pure relevance picked %v, want [a b] (the positive control)", got)
	}
}

func TestRepeatsOfAPickedItemAreLeftOut(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	var cands []Candidate
	for day := range 6 {
		c := cand(fmt.Sprintf("ask%d", day), fmt.Sprintf("Day %d: Ada asks about the light and the brother lost at sea", day+10), 5, int64(day)*60, 0.9-float64(day)/100)
		c.About = []string{"Ada"}
		cands = append(cands, c)
	}
	other := cand("boat", "Ada's boat broke on the rocks below the light", 5, 0, 0.5)
	other.About = []string{"Ada"}
	cands = append(cands, other)
	got := Select(cands, p)
	if ids := picked(got); !slices.Equal(ids, []string{"ask0", "boat"}) {
		t.Errorf("picked %v, want [ask0 boat]: one of the look-alikes, and the different memory", ids)
	}
	for _, s := range got {
		if strings.HasPrefix(s.ID, "ask") && s.ID != "ask0" && s.Why != "repeats a picked item" {
			t.Errorf("%s: why %q, want it left out as a repeat", s.ID, s.Why)
		}
	}
	// Under the cut, a look-alike is MMR's to weigh, not left out.
	p.Lambda = 1
	cands[1].Text = "Ada asks about the lamp, the brother and the storm that took him"
	if ids := picked(Select(cands, p)); !slices.Contains(ids, "ask1") {
		t.Errorf("picked %v: ask1 says something new and should be picked on relevance", ids)
	}
}

func TestItemsThatRepeatThePromptAreLeftOut(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	cands := []Candidate{
		cand("asked", "Day 3: Ada asks about the light and the brother lost at sea", 5, 0, 0.95),
		cand("kept", "Ada's boat broke on the rocks below the light", 5, 0, 0.9),
		cand("again", "Ada's boat broke on the rocks below the old light", 5, 0, 0.85),
		cand("oak", "Tess buried the brass compass under the old oak by the light", 5, 0, 0.5),
	}
	// Nothing said or shown (the positive control): the asking is picked,
	// and the look-alike of kept is left out only as a repeat within the block.
	if ids := picked(Select(cands, p)); !slices.Equal(ids, []string{"asked", "kept", "oak"}) {
		t.Fatalf("picked %v without Said and Shown, want [asked kept oak]", ids)
	}
	p.Said = []string{"Day 9: Ada asks about the light and the brother lost at sea"}
	p.Shown = map[string]bool{"kept": true}
	got := Select(cands, p)
	if ids := picked(got); !slices.Equal(ids, []string{"kept", "oak"}) {
		t.Errorf("picked %v, want [kept oak]: the asking repeats the new message, again the kept item", ids)
	}
	for _, s := range got {
		if (s.ID == "asked" || s.ID == "again") && s.Why != whyEchoes {
			t.Errorf("%s: why %q, want %q", s.ID, s.Why, whyEchoes)
		}
	}
}

func TestFadingGivesGistKeepsImportantDropsTrivial(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.Now = 60 * day
	cands := []Candidate{
		cand("trivial", "the soup was cold", 2, 0, 0.9),
		cand("vital", "the compass is under the oak", 9, 0, 0.9),
		cand("fresh", "the boat leaks", 5, 60*day-30, 0.5),
	}
	got := Select(cands, p)
	byID := map[string]Scored{}
	for _, s := range got {
		byID[s.ID] = s
	}
	if !byID["trivial"].Gone || byID["trivial"].Picked {
		t.Errorf("a trivial two-month-old item was not dropped: %+v", byID["trivial"])
	}
	if !byID["vital"].Picked || !byID["vital"].Faded {
		t.Errorf("an important old item should be recalled as its gist: %+v", byID["vital"])
	}
	if !byID["fresh"].Picked || byID["fresh"].Faded {
		t.Errorf("a fresh item should be recalled exactly: %+v", byID["fresh"])
	}
	block := Block("en", got)
	if !strings.Contains(block, "gist of vital") || strings.Contains(block, "under the oak") {
		t.Errorf("the block does not give the faded item as its gist:\n%s", block)
	}
	p.Fading = Fading{}
	exact := Block("en", Select(cands, p))
	if !strings.Contains(exact, "the compass is under the oak") || !strings.Contains(exact, "the soup was cold") {
		t.Errorf("fading off should recall exact texts:\n%s", exact)
	}
}

func TestBeliefsReplaceFoldedPerceptionsAndPromptTurnsAreSkipped(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.InPrompt = map[string]bool{"m9": true}
	folded := cand("p1", "Tess lied about the key", 5, 0, 0.8)
	folded.FoldedInto = "b1"
	belief := Candidate{Item: Item{ID: "b1", Kind: Belief, Text: "Tess cannot be trusted with keys", Importance: 6, Confidence: "doubtful"}, Relevance: 0.7}
	live := cand("p2", "the gate creaks", 3, 0, 0.6)
	live.MessageID = "m9"
	got := Select([]Candidate{folded, belief, live}, p)
	if ids := picked(got); !slices.Equal(ids, []string{"b1"}) {
		t.Errorf("picked %v, want only the belief", ids)
	}
	block := Block("en", got)
	if !strings.Contains(block, "You suspect, without much certainty: Tess cannot be trusted") {
		t.Errorf("belief not given with its confidence in words:\n%s", block)
	}
}

func TestAssociationsComeAlongWithinBudget(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.MaxItems = 1
	a := cand("a", "Mara hid the letter", 6, 0, 0.9)
	a.About = []string{"the letter"}
	b := cand("b", "the seal on the letter was green", 4, 0, 0.1)
	b.About = []string{"The Letter"}
	c := cand("c", "the weather turned", 4, 0, 0.2)
	got := Select([]Candidate{a, b, c}, p)
	if ids := picked(got); !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("picked %v, want [a b] (b shares the letter)", ids)
	}
	if !slices.Contains(got[1].Sources, Association) {
		t.Errorf("b's sources %v lack association", got[1].Sources)
	}
	p.MaxChars = len("Mara hid the letter") + 5
	if ids := picked(Select([]Candidate{a, b, c}, p)); !slices.Equal(ids, []string{"a"}) {
		t.Errorf("over the budget picked %v, want [a]", ids)
	}
}

func TestBlockSaysHowTheCharacterKnows(t *testing.T) {
	t.Parallel()
	mk := func(mode, via string) Scored {
		return Scored{Candidate: Candidate{Item: Item{Kind: Perception, Text: "x", Mode: mode, Via: via, When: "day 2, dawn"}}, Picked: true}
	}
	items := []Scored{mk("saw", ""), mk("heard", ""), mk("told", "Tess"), mk("inferred", "")}
	for lang, want := range map[string][]string{
		"en": {"(day 2, dawn) You saw: x", "You heard: x", "Tess told you: x", "You guessed: x"},
		"zh": {"你看到：x", "你听到：x", "Tess告诉过你：x", "你猜测：x"},
	} {
		got := Block(lang, items)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s block lacks %q:\n%s", lang, w, got)
			}
		}
	}
	if got := Block("en", nil); got != "" {
		t.Errorf("empty selection rendered %q", got)
	}
	for _, s := range Select([]Candidate{cand("a", "x", 5, 0, 1)}, DefaultParams()) {
		if strings.Contains(Block("en", []Scored{s}), fmt.Sprintf("%.2f", s.Total)) {
			t.Errorf("a score reached the block")
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"罗盘 compass", "Mara把罗盘", "", "ｆｕｌｌ　ｗｉｄｔｈ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts := Terms(s)
		if len(ts) > MaxTerms {
			t.Fatalf("%d terms", len(ts))
		}
		seen := map[string]bool{}
		for _, term := range ts {
			if term == "" || seen[term] {
				t.Fatalf("empty or repeated term %q", term)
			}
			seen[term] = true
		}
	})
}

func TestCuesNameWhatTheTextMentions(t *testing.T) {
	t.Parallel()
	if got := CueTerm("  The Old\tOak "); got != "@the old oak" {
		t.Errorf("CueTerm = %q", got)
	}
	for text, want := range map[string]string{
		"Is the old oak still standing?": "@the old oak",
		"罗盘在老槐树下吗？":                      "@老槐树",
		"Ask Tess, then go.":             "@tess",
	} {
		if got := Cues(text); !slices.Contains(got, want) {
			t.Errorf("Cues(%q) lacks %q: %q", text, want, got)
		}
	}
	if got := Cues("Ask Tess, then go."); slices.Contains(got, "@tess then") {
		t.Errorf("a cue crossed punctuation: %q", got)
	}
	if got := Keywords("Where did I bury the compass?"); !slices.Equal(got, []string{"bury", "compass"}) {
		t.Errorf("Keywords = %q", got)
	}
}

func TestRankPrefersRareWordsAndCues(t *testing.T) {
	t.Parallel()
	// "door" found 100 items (as many as a term may fetch), "kestrel" one.
	var hits []Hit
	for i := range 100 {
		hits = append(hits, Hit{ID: fmt.Sprint("common", i), Kind: Perception, Term: "door"})
	}
	hits = append(hits, Hit{ID: "rare", Kind: Perception, Term: "kestrel"}, Hit{ID: "named", Kind: Belief, Term: "@tess"})
	got := Rank(hits, []string{"door", "kestrel"}, 100, 3)
	if len(got) != 3 || got[0].ID != "rare" && got[1].ID != "rare" {
		t.Fatalf("ranked %+v, want the rare word's item near the top", got)
	}
	byID := map[string]Ranked{}
	for _, r := range got {
		byID[r.ID] = r
	}
	if byID["rare"].Relevance <= byID["common0"].Relevance {
		t.Errorf("rare %.2f, common %.2f", byID["rare"].Relevance, byID["common0"].Relevance)
	}
	if n := byID["named"]; n.Relevance == 0 || !slices.Equal(n.Sources, []Source{Cue}) {
		t.Errorf("the cue's item: %+v", n)
	}
}

// Of two memories on one subject the newer is read last, whatever order
// MMR picked them in.
func TestBlockIsInStoryOrder(t *testing.T) {
	t.Parallel()
	old := cand("old", "The password is heron.", 5, day, 0.9)
	newer := cand("new", "The password is kestrel now.", 5, 3*day, 0.9)
	b := Block("en", []Scored{{Candidate: newer, Picked: true}, {Candidate: old, Picked: true}})
	if strings.Index(b, "kestrel") < strings.Index(b, "heron") {
		t.Errorf("the newer memory comes first:\n%s", b)
	}
}

// TestACorrectionWinsATie: when story time has not moved, a correction and
// the stale fact it corrects score alike; the newer one is recalled and the
// older left out as its repeat, in whichever order they come.
func TestACorrectionWinsATie(t *testing.T) {
	t.Parallel()
	stale := cand("stale", "Tess keeps the brass key in the red box by the stove", 5, 100, 0.8)
	stale.Seq = 4
	fixed := cand("fixed", "Tess keeps the brass key in the blue box by the stove", 5, 100, 0.8)
	fixed.Seq = 7
	for _, cands := range [][]Candidate{{stale, fixed}, {fixed, stale}} {
		got := Select(cands, DefaultParams())
		if ids := picked(got); !slices.Equal(ids, []string{"fixed"}) {
			t.Errorf("candidates %s, %s: picked %v, want [fixed]", cands[0].ID, cands[1].ID, ids)
		}
		for _, s := range got {
			if s.ID == "stale" && s.Why != whyRepeats {
				t.Errorf("stale: why %q, want %q", s.Why, whyRepeats)
			}
		}
	}
}

// TestACorrectionIsNoEchoOfWhatThePromptShows: an item newer than a look-
// alike the prompt already shows is its update, not its echo: it is
// recalled; an older look-alike still is an echo (control).
func TestACorrectionIsNoEchoOfWhatThePromptShows(t *testing.T) {
	t.Parallel()
	shown := cand("shown", "Tess keeps the brass key in the red box by the stove", 5, 100, 0.8)
	shown.Seq = 4
	fixed := cand("fixed", "Tess keeps the brass key in the blue box by the stove", 5, 100, 0.8)
	fixed.Seq = 7
	older := cand("older", "Tess keeps the brass key in the green box by the stove", 5, 100, 0.8)
	older.Seq = 2
	p := DefaultParams()
	p.Shown = map[string]bool{"shown": true}
	for _, s := range Select([]Candidate{shown, fixed, older}, p) {
		switch s.ID {
		case "fixed":
			if s.Why == whyEchoes {
				t.Errorf("the newer update was dropped as an echo of what the prompt shows")
			}
		case "older":
			if s.Why != whyEchoes {
				t.Errorf("older: why %q, want %q", s.Why, whyEchoes)
			}
		}
	}
}

// A character's own names are neither words nor cues of its own recall;
// other names still cue, in either script.
func TestQueryLeavesOutOwnNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text      string
		self      []string
		words     []string
		cues, not []string
	}{
		{"@Mara where did Bren bury the compass?", []string{"Mara"}, []string{"bren", "bury", "compass"}, []string{"@bren"}, []string{"@mara"}},
		{"Mara Vell, ask Tess.", []string{"Mara Vell", "Mar"}, []string{"tess"}, []string{"@tess"}, []string{"@mara vell"}},
		{"苏砚，罗盘在哪儿？", []string{"苏砚"}, []string{"罗盘", "盘在", "在哪", "哪儿"}, []string{"@罗盘"}, []string{"@苏砚"}},
	}
	for _, tt := range tests {
		words, cues := Query(tt.text, tt.self)
		if !slices.Equal(words, tt.words) {
			t.Errorf("Query(%q, %q) words = %q, want %q", tt.text, tt.self, words, tt.words)
		}
		for _, c := range tt.cues {
			if !slices.Contains(cues, c) {
				t.Errorf("Query(%q, %q) cues %q lack %q", tt.text, tt.self, cues, c)
			}
		}
		for _, c := range tt.not {
			if slices.Contains(cues, c) {
				t.Errorf("Query(%q, %q) cues hold the character's own %q", tt.text, tt.self, c)
			}
		}
	}
}
