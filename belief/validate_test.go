package belief

import (
	"slices"
	"strings"
	"testing"
)

// TestValidateRules lists every evidence rule with the cases it accepts and
// those it corrects, drops or refuses, and the reason recorded.
func TestValidateRules(t *testing.T) {
	t.Parallel()
	const (
		dropped   = " dropped: "
		corrected = " corrected: "
		refused   = " refused: "
	)
	long300 := strings.Repeat("钥匙", 150)
	long301 := long300 + "。"
	tests := []struct {
		rule    string
		pivotal int
		answer  string
		want    []string // summary of the changes
		notes   []string
	}{
		// A new belief needs perceptions from two distinct turns, or one pivotal event.
		{rule: "add: two distinct turns",
			answer: `{"add":[{"text":"Tess hides things from me.","confidence":"likely","supports":["p1","p2"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess"}},
		{rule: "add: two perceptions of one turn are a single moment",
			answer: `{"add":[{"text":"Tess lies to me.","supports":["p2","p3"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonSingleMoment)}},
		{rule: "add: one pivotal event of importance >= 8",
			answer: `{"add":[{"text":"Elias turns dangerous when cornered.","supports":["p4"]}]}`,
			want:   []string{"create new-1 likely +p4 @15/15 about=Elias,captain"}},
		{rule: "add: pivotal below pivotal_importance is a single moment",
			answer: `{"add":[{"text":"The captain relies on Elias.","supports":["p6"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonSingleMoment)}},
		{rule: "add: important but not pivotal is a single moment",
			answer: `{"add":[{"text":"Elias despises the captain.","supports":["p5"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonSingleMoment)}},
		{rule: "add: pivotal_importance is a setting", pivotal: 7,
			answer: `{"add":[{"text":"The captain relies on Elias.","supports":["p6"]}]}`,
			want:   []string{"create new-1 likely +p6 @16/16 about=captain,Elias"}},
		// A new sure needs support from two turns; else it is lowered to likely.
		{rule: "add: sure with two supporting turns",
			answer: `{"add":[{"text":"Tess took the key and brought it back.","confidence":"sure","supports":["p1","p7"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 sure +p1 +p7 @20/20 about=Tess"}},
		{rule: "add: sure from one pivotal event is lowered to likely",
			answer: `{"add":[{"text":"Elias turns dangerous when cornered.","confidence":"sure","supports":["p4"]}]}`,
			want:   []string{"create new-1 likely +p4 @15/15 about=Elias,captain"},
			notes:  []string{"add[0]" + corrected + string(ReasonSureOneTurn)}},
		{rule: "add: a confidence that is not one of the three is set to likely",
			answer: `{"add":[{"text":"Tess hides things from me.","confidence":"certain","supports":["p1","p2"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess,brass key"},
			notes:  []string{"add[0]" + corrected + string(ReasonBadConfidence)}},
		{rule: "add: a missing confidence means likely",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p1","p2"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess,brass key"}},
		// Citations of perceptions not shown are removed; nothing left drops the item.
		{rule: "add: a citation not shown is removed",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p1","p2","p99"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess,brass key"},
			notes:  []string{"add[0]" + corrected + string(ReasonUnknownPerc)}},
		{rule: "add: only citations not shown",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p99","Tess lied"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonNoPerception)}},
		{rule: "add: no citation at all",
			answer: `{"add":[{"text":"Tess hides things from me."}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonNoPerception)}},
		{rule: "add: a perception for and against counts as support",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p1","p2"],"against":["p2","p3"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 -p3 @12/12 about=Tess"},
			notes:  []string{"add[0]" + corrected + string(ReasonBothSides)}},
		{rule: "add: too long or too many names in about are removed",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p1","p2"],"about":["Tess","` + strings.Repeat("x", 81) + `","a","b","c","d","e","f","g","h"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess,a,b,c,d,e,f,g"},
			notes:  []string{"add[0]" + corrected + string(ReasonAboutCut)}},
		// Fields written into a text are refused; ordinary words are not.
		{rule: "text: a confidence in brackets",
			answer: `{"add":[{"text":"(sure) Tess lies to me.","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a confidence label",
			answer: `{"add":[{"text":"Tess lies to me. confidence: high","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: an importance with a number",
			answer: `{"add":[{"text":"Tess lies to me, importance 7","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a perception id as the prompt writes it",
			answer: `{"add":[{"text":"Tess lied [p:p2] about the night.","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a belief id with its prefix",
			answer: `{"add":[{"text":"Tess lies, as b:01JB4X said.","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a bare ULID",
			answer: `{"add":[{"text":"Tess lies about 01JB4XWQ9Z8K3M2N5P6R7S8T9V.","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a turn number as the prompt writes it",
			answer: `{"add":[{"text":"Tess lied at turn=12.","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a Chinese confidence in brackets",
			answer: `{"add":[{"text":"（确信）苔丝在撒谎。","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a Chinese importance",
			answer: `{"add":[{"text":"苔丝在撒谎，重要度：7","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: ordinary words are not fields",
			answer: `{"add":[{"text":"I am sure she lied to me; her importance to Elias shows, and she keeps her confidence close.","confidence":"sure","supports":["p2","p7"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 sure +p2 +p7 @20/20 about=Tess"}},
		{rule: "text: a Chinese confidence label",
			answer: `{"add":[{"text":"苏砚在撒谎。把握：确信","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + refused + string(ReasonFieldInText)}},
		{rule: "text: a Chinese sentence with a colon after 把握 is ordinary",
			answer: `{"add":[{"text":"我有把握：苏砚在撒谎。","supports":["p2","p7"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 likely +p2 +p7 @20/20 about=Tess"}},
		{rule: "text: ordinary Chinese words are not fields",
			answer: `{"add":[{"text":"我确信苔丝在撒谎，这件事很重要。","supports":["p2","p7"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 likely +p2 +p7 @20/20 about=Tess"}},
		// Over-long and empty texts drop the item.
		{rule: "text: at the length limit",
			answer: `{"add":[{"text":"` + long300 + `","supports":["p1","p2"],"about":["Tess"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess"}},
		{rule: "text: over the length limit",
			answer: `{"add":[{"text":"` + long301 + `","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonLongText)}},
		{rule: "text: empty",
			answer: `{"add":[{"text":"  ","supports":["p1","p2"]}]}`,
			notes:  []string{"add[0]" + dropped + string(ReasonEmptyText)}},
		// Strengthening raises one level with new support, newer than the belief.
		{rule: "strengthen: newer support raises one level",
			answer: `{"strengthen":[{"belief":"b1","supports":["p7"]}]}`,
			want:   []string{"update b1 sure +p0 +p00 +p7 @8/20"}},
		{rule: "strengthen: sure stays sure and gains the link",
			answer: `{"strengthen":[{"belief":"b2","supports":["p6"]}]}`,
			want:   []string{"update b2 sure +p6 +q1 +q2 @6/16"}},
		{rule: "strengthen: support not newer than the belief",
			answer: `{"strengthen":[{"belief":"b4","supports":["p7"]}]}`,
			notes:  []string{"strengthen[0]" + dropped + string(ReasonNotNewer)}},
		{rule: "strengthen: older support is removed, newer counts",
			answer: `{"strengthen":[{"belief":"b1","supports":["p1","p7"]}]}`,
			want:   []string{"update b1 sure +p0 +p00 +p7 @8/20"},
			notes:  []string{"strengthen[0]" + corrected + string(ReasonNotNewer)}},
		{rule: "strengthen: a belief that does not exist",
			answer: `{"strengthen":[{"belief":"b99","supports":["p7"]}]}`,
			notes:  []string{"strengthen[0]" + dropped + string(ReasonUnknownBelief)}},
		{rule: "strengthen: a belief the check doubted this round",
			answer: `{"strengthen":[{"belief":"b6","supports":["p7"]}]}`,
			notes:  []string{"strengthen[0]" + dropped + string(ReasonDoubtedThisRound)}},
		{rule: "strengthen: support already linked is not new",
			answer: `{"strengthen":[{"belief":"b7","supports":["p1"]}]}`,
			notes:  []string{"strengthen[0]" + dropped + string(ReasonNoNewSupport)}},
		{rule: "strengthen: a perception linked against is not support",
			answer: `{"strengthen":[{"belief":"b7","supports":["p7","p2"]}]}`,
			want:   []string{"update b7 sure +p1 +p2 +q10 -p7 @9/12"},
			notes:  []string{"strengthen[0]" + corrected + string(ReasonBothSides)}},
		{rule: "strengthen: no support",
			answer: `{"strengthen":[{"belief":"b1"}]}`,
			notes:  []string{"strengthen[0]" + dropped + string(ReasonNoPerception)}},
		// Lowering needs a contradicting perception; the engine lowers one level.
		{rule: "doubt: a newer contradiction lowers one level and links it",
			answer: `{"doubt":[{"belief":"b2","against":["p4"]}]}`,
			want:   []string{"update b2 likely +q1 +q2 -p4 @6/15"}},
		{rule: "doubt: never below doubtful",
			answer: `{"doubt":[{"belief":"b3","against":["p5"]}]}`,
			want:   []string{"update b3 doubtful +q3 -p5 -q4 @9/15"}},
		{rule: "doubt: no contradicting perception",
			answer: `{"doubt":[{"belief":"b2","against":[]}]}`,
			notes:  []string{"doubt[0]" + dropped + string(ReasonNoContradiction)}},
		{rule: "doubt: a contradiction not newer than the belief",
			answer: `{"doubt":[{"belief":"b4","against":["p7"]}]}`,
			notes:  []string{"doubt[0]" + dropped + string(ReasonNotNewer)}},
		{rule: "doubt: a belief the check doubted this round is not lowered twice",
			answer: `{"doubt":[{"belief":"b6","against":["p7"]}]}`,
			notes:  []string{"doubt[0]" + dropped + string(ReasonDoubtedThisRound)}},
		{rule: "doubt: a contradiction already recorded",
			answer: `{"doubt":[{"belief":"b7","against":["p7"]}]}`,
			notes:  []string{"doubt[0]" + dropped + string(ReasonRecorded)}},
		// Merging replaces beliefs by one that is kept, without newer evidence.
		{rule: "merge: two beliefs into one, evidence kept",
			answer: `{"merge":[{"beliefs":["b1","b5"],"text":"Tess and Elias share a secret about the key."}]}`,
			want:   []string{"create new-1 likely +p0 +p00 +q7 +q8 @5/11 about=Tess,brass key,Elias from=b1,b5", "delete b1", "delete b5"}},
		{rule: "merge: needs no newer perception",
			answer: `{"merge":[{"beliefs":["b4","b5"],"text":"Keys slip through Tess's hands to Elias."}]}`,
			want:   []string{"create new-1 likely +q5 +q6 +q7 +q8 @5/30 about=Tess,brass key,Elias from=b4,b5", "delete b4", "delete b5"}},
		{rule: "merge: no surer than its surest belief",
			answer: `{"merge":[{"beliefs":["b3","b5"],"text":"The key ties Elias to the captain.","confidence":"sure"}]}`,
			want:   []string{"create new-1 likely +q3 +q7 +q8 -q4 @5/14 about=captain,Elias,brass key from=b3,b5", "delete b3", "delete b5"},
			notes:  []string{"merge[0]" + corrected + string(ReasonMergeAbove)}},
		{rule: "merge: a sure merge needs two supporting turns",
			answer: `{"merge":[{"beliefs":["b8","b9"],"text":"Elias keeps his word.","confidence":"sure"}]}`,
			want:   []string{"create new-1 likely +q11 +q12 @13/13 about=Elias from=b8,b9", "delete b8", "delete b9"},
			notes:  []string{"merge[0]" + corrected + string(ReasonSureOneTurn)}},
		{rule: "merge: a sure merge with newer support stays sure",
			answer: `{"merge":[{"beliefs":["b8","b9"],"text":"Elias keeps his word.","confidence":"sure","supports":["p6"]}]}`,
			want:   []string{"create new-1 sure +p6 +q11 +q12 @13/16 about=Elias from=b8,b9", "delete b8", "delete b9"}},
		{rule: "merge: a belief that does not exist is removed",
			answer: `{"merge":[{"beliefs":["b1","b5","b99"],"text":"Tess and Elias share a secret about the key."}]}`,
			want:   []string{"create new-1 likely +p0 +p00 +q7 +q8 @5/11 about=Tess,brass key,Elias from=b1,b5", "delete b1", "delete b5"},
			notes:  []string{"merge[0]" + corrected + string(ReasonUnknownBelief)}},
		{rule: "merge: fewer than two existing beliefs",
			answer: `{"merge":[{"beliefs":["b1","b99"],"text":"Tess keeps secrets."}]}`,
			notes:  []string{"merge[0]" + dropped + string(ReasonMergeNeedsTwo)}},
		{rule: "merge: a belief the check doubted this round",
			answer: `{"merge":[{"beliefs":["b1","b6"],"text":"Tess keeps the stair's secrets."}]}`,
			notes:  []string{"merge[0]" + dropped + string(ReasonDoubtedThisRound)}},
		{rule: "merge: a field in the text",
			answer: `{"merge":[{"beliefs":["b1","b5"],"text":"Tess and Elias share a secret (likely)."}]}`,
			notes:  []string{"merge[0]" + refused + string(ReasonFieldInText)}},
		// Dropping needs perceptions newer than the belief.
		{rule: "drop: with a newer perception",
			answer: `{"drop":[{"belief":"b5","because":["p7"]}]}`,
			want:   []string{"delete b5"}},
		{rule: "drop: with perceptions not newer than the belief",
			answer: `{"drop":[{"belief":"b4","because":["p7"]}]}`,
			notes:  []string{"drop[0]" + dropped + string(ReasonNotNewer)}},
		{rule: "drop: without a perception",
			answer: `{"drop":[{"belief":"b5"}]}`,
			notes:  []string{"drop[0]" + dropped + string(ReasonNoPerception)}},
		{rule: "drop: a belief the check doubted this round",
			answer: `{"drop":[{"belief":"b6","because":["p7"]}]}`,
			notes:  []string{"drop[0]" + dropped + string(ReasonDoubtedThisRound)}},
		{rule: "drop: a belief that does not exist",
			answer: `{"drop":[{"belief":"b99","because":["p7"]}]}`,
			notes:  []string{"drop[0]" + dropped + string(ReasonUnknownBelief)}},
		// One belief changes once per answer; a bad item spoils nothing else.
		{rule: "answer: the first item that changes a belief wins it",
			answer: `{"strengthen":[{"belief":"b1","supports":["p7"]}],"drop":[{"belief":"b1","because":["p7"]}]}`,
			want:   []string{"update b1 sure +p0 +p00 +p7 @8/20"},
			notes:  []string{"drop[0]" + dropped + string(ReasonAlreadyChanged)}},
		{rule: "answer: a merge cannot take a belief already changed",
			answer: `{"strengthen":[{"belief":"b5","supports":["p7"]}],"merge":[{"beliefs":["b1","b5"],"text":"Tess and Elias share a secret."}]}`,
			want:   []string{"update b5 sure +p7 +q7 +q8 @5/20"},
			notes:  []string{"merge[0]" + dropped + string(ReasonAlreadyChanged)}},
		{rule: "answer: items that cannot be read are dropped, the rest counts",
			answer: `{"add":["Tess lies",{"text":"Tess hides things from me.","supports":["p1","p2"]}],"drop":5,"doubt":[{"belief":"b2","against":["p4"]}]}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess,brass key", "update b2 likely +q1 +q2 -p4 @6/15"},
			notes:  []string{"add[0]" + dropped + string(ReasonMalformed), "drop" + dropped + string(ReasonMalformed)}},
		{rule: "answer: ids copied with their prompt prefix are read bare",
			answer: `{"add":[{"text":"Tess hides things from me.","supports":["p:p1","[p:p2 turn=12]"],"about":"Tess"}],"strengthen":{"belief":"b:b2","supports":"p6"}}`,
			want:   []string{"create new-1 likely +p1 +p2 @12/12 about=Tess", "update b2 sure +p6 +q1 +q2 @6/16"}},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			a, err := ParseAnswer(tc.answer)
			if err != nil {
				t.Fatalf("ParseAnswer: %v", err)
			}
			r := scene()
			if tc.pivotal != 0 {
				r.PivotalImportance = tc.pivotal
			}
			ch, notes := Validate(r, a)
			if got := summary(ch); !slices.Equal(got, tc.want) {
				t.Errorf("changes:\ngot  %q\nwant %q", got, tc.want)
			}
			if got := noteLines(notes); !slices.Equal(got, tc.notes) {
				t.Errorf("notes:\ngot  %q\nwant %q", got, tc.notes)
			}
			for _, n := range notes {
				for _, w := range storyWords {
					if strings.Contains(strings.ToLower(n.String()), strings.ToLower(w)) {
						t.Errorf("note %q quotes story text %q", n, w)
					}
				}
			}
		})
	}
}
