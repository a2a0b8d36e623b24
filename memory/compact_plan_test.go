package memory

import (
	"fmt"
	"strings"
	"testing"

	"troupe/prompt"
	"troupe/prompt/prompttest"
)

func TestPlanCompactionTrigger(t *testing.T) {
	t.Parallel()
	params := CompactParams{Keep: 6, Period: 30, MinCutChars: 2000, ManualMinCutChars: 500}
	tests := []struct {
		name     string
		turns    []prompt.Turn
		params   CompactParams
		manual   bool
		due      bool
		cutBeats int
		reason   string
	}{
		{"35 beats is not enough", prompttest.Story(35, 100, false), params, false, false, 29, ReasonTooFewBeats},
		{"36 beats triggers", prompttest.Story(36, 100, false), params, false, true, 30, ""},
		{"37 beats triggers", prompttest.Story(37, 100, false), params, false, true, 31, ""},
		// 30 cut beats × 2 messages: 1999 and 2000 characters in all.
		{"cut of 1999 chars is too little", withCutChars(prompttest.Story(36, 1, false), 1999, 30), params, false, false, 30, ReasonTooLittleCut},
		{"cut of 2000 chars is enough", withCutChars(prompttest.Story(36, 1, false), 2000, 30), params, false, true, 30, ""},
		{"period 0 turns it off", prompttest.Story(100, 100, false), CompactParams{Keep: 6, Period: 0, MinCutChars: 2000, ManualMinCutChars: 500}, false, false, 0, ReasonOff},
		{"manual ignores the period", prompttest.Story(10, 100, false), params, true, true, 4, ""},
		{"manual needs 500 chars: 499", withCutChars(prompttest.Story(10, 1, false), 499, 4), params, true, false, 4, ReasonTooLittleCut},
		{"manual needs 500 chars: 500", withCutChars(prompttest.Story(10, 1, false), 500, 4), params, true, true, 4, ""},
		{"manual with only keep beats", prompttest.Story(6, 100, false), params, true, false, 0, ReasonTooFewBeats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := PlanCompaction(tt.turns, tt.params, tt.manual)
			if plan.Due != tt.due {
				t.Errorf("due = %v (%s), want %v", plan.Due, plan.Reason, tt.due)
			}
			if plan.CutBeats != tt.cutBeats {
				t.Errorf("cut beats = %d, want %d", plan.CutBeats, tt.cutBeats)
			}
			if !tt.due && plan.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", plan.Reason, tt.reason)
			}
		})
	}
}

// withCutChars sets the content of the first cutBeats beats so that they
// hold exactly total characters.
func withCutChars(turns []prompt.Turn, total, cutBeats int) []prompt.Turn {
	n := cutBeats * 2
	for i := 0; i < n; i++ {
		size := total / n
		if i < total%n {
			size++
		}
		turns[i].Content = strings.Repeat("x", size)
	}
	return turns
}

func TestPlanCompactionCutEndsOnBeatBoundary(t *testing.T) {
	t.Parallel()
	turns := prompttest.Story(40, 100, true)
	// A joined turn: two user messages in a row are one beat.
	turns = append(turns, prompt.Turn{ID: "x1", Role: prompt.RoleUser, Content: "a"}, prompt.Turn{ID: "x2", Role: prompt.RoleUser, Content: "b"}, prompt.Turn{ID: "x3", Role: prompt.RoleAssistant, Content: "c"})
	plan := PlanCompaction(turns, CompactParams{Keep: 6, Period: 30, MinCutChars: 2000}, false)
	if !plan.Due {
		t.Fatalf("not due: %s", plan.Reason)
	}
	if plan.Beats != 41 {
		t.Errorf("beats = %d, want 41", plan.Beats)
	}
	last := plan.Cut[len(plan.Cut)-1]
	next := turns[len(plan.Cut)]
	if last.Role != prompt.RoleAssistant || next.Role != prompt.RoleUser {
		t.Errorf("cut ends at %s/%s, want a reply followed by a user message", last.ID, next.ID)
	}
	if plan.Cut[0].ID != "g" {
		t.Errorf("greeting not in the cut")
	}
	if got := len(prompt.BeatStarts(turns[len(plan.Cut):])); got != 6 {
		t.Errorf("kept %d beats, want 6", got)
	}
}

// TestPlanCompactionCutsUnansweredPile: messages nobody answered (the model
// failed, or a reply is being written) are each a beat to the planner, so a
// pile of them can be cut and never holds the chat's compaction off.
func TestPlanCompactionCutsUnansweredPile(t *testing.T) {
	t.Parallel()
	params := CompactParams{Keep: 6, Period: 30, MinCutChars: 2000, ManualMinCutChars: 500}
	pile := func(beats, unanswered int) []prompt.Turn {
		turns := prompttest.Story(beats, 100, true)
		for i := 0; i < unanswered; i++ {
			turns = append(turns, prompt.Turn{ID: fmt.Sprintf("p%d", i), Role: prompt.RoleUser, Content: strings.Repeat("p", 100)})
		}
		return turns
	}
	tests := []struct {
		name     string
		turns    []prompt.Turn
		manual   bool
		due      bool
		cutBeats int
		// firstKept is the id of the first message left uncovered.
		firstKept string
	}{
		{"40 unanswered after 2 beats: automatic", pile(2, 40), false, true, 36, "p34"},
		{"10 unanswered alone: /compact", pile(0, 10), true, true, 4, "p4"},
		{"10 unanswered after 3 beats: /compact", pile(3, 10), true, true, 7, "p4"},
		{"6 unanswered alone: nothing old enough", pile(0, 6), true, false, 0, ""},
		{"29 unanswered after 2 beats: not yet automatic", pile(2, 29), false, false, 25, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := PlanCompaction(tt.turns, params, tt.manual)
			if plan.Due != tt.due || plan.CutBeats != tt.cutBeats {
				t.Fatalf("due %v (%s), cut beats %d; want %v, %d", plan.Due, plan.Reason, plan.CutBeats, tt.due, tt.cutBeats)
			}
			if !tt.due {
				return
			}
			if got := tt.turns[len(plan.Cut)].ID; got != tt.firstKept {
				t.Errorf("first kept message %s, want %s", got, tt.firstKept)
			}
		})
	}
	// Once answered, a joined run is one beat again: the cut never splits it.
	turns := append(pile(36, 3), prompt.Turn{ID: "r", Role: prompt.RoleAssistant, Content: "reply"})
	if plan := PlanCompaction(turns, params, false); plan.Beats != 37 {
		t.Errorf("36 beats and an answered run of 3 count %d beats, want 37", plan.Beats)
	}
}
