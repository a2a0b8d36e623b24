package belief

import (
	"slices"
	"testing"
)

func TestForget(t *testing.T) {
	t.Parallel()
	// x* are perceptions of the chat being forgotten, y* of another chat.
	beliefs := []Belief{
		{ID: "for", Evidence: []Evidence{{Perception: "x1", Stance: Supports}, {Perception: "y1", Stance: Supports}, {Perception: "y2", Stance: Supports}}},
		{ID: "against", Evidence: []Evidence{{Perception: "y3", Stance: Supports}, {Perception: "y4", Stance: Supports}, {Perception: "x2", Stance: Contradicts}}},
		{ID: "kept", Evidence: []Evidence{{Perception: "y1", Stance: Supports}, {Perception: "y5", Stance: Supports}}},
		{ID: "merged", MergedFrom: []string{"for", "kept2"}, Evidence: []Evidence{{Perception: "y6", Stance: Supports}}},
		{ID: "merged-again", MergedFrom: []string{"merged"}, Evidence: []Evidence{{Perception: "y7", Stance: Supports}}},
		{ID: "other", Evidence: []Evidence{{Perception: "y8", Stance: Supports}, {Perception: "y9", Stance: Contradicts}}},
	}
	got := Forget(beliefs, map[string]bool{"x1": true, "x2": true})
	if want := []string{"against", "for", "merged", "merged-again"}; !slices.Equal(got.Deleted, want) {
		t.Errorf("deleted %q, want %q", got.Deleted, want)
	}
	if want := []string{"y1", "y2", "y3", "y4", "y6", "y7"}; !slices.Equal(got.Renewed, want) {
		t.Errorf("renewed %q, want %q", got.Renewed, want)
	}
	if none := Forget(beliefs, map[string]bool{"z": true}); len(none.Deleted)+len(none.Renewed) != 0 {
		t.Errorf("forgetting an uncited perception took %+v", none)
	}
}

// TestForgetThenReform: after a chat is forgotten, the other chat's renewed
// perceptions are shown again and re-form the belief they still support.
func TestForgetThenReform(t *testing.T) {
	t.Parallel()
	x := Perception{ID: "x1", Turn: 3, Text: "Tess hid the key.", About: []string{"Tess"}}
	y1 := Perception{ID: "y1", Turn: 7, Text: "Tess lied about the key.", About: []string{"Tess"}}
	y2 := Perception{ID: "y2", Turn: 9, Text: "Tess kept the key from me.", About: []string{"Tess"}}
	formed, _ := Validate(Round{Perceptions: []Perception{x, y1, y2}, PivotalImportance: defaults.PivotalImportance},
		Answer{Add: []Add{{Text: "Tess hides things about the key.", Supports: IDs{"x1", "y1", "y2"}}}})
	if len(formed.Created) != 1 {
		t.Fatalf("the belief was not formed: %+v", formed)
	}
	gone := Forget(formed.Created, map[string]bool{"x1": true})
	if !slices.Equal(gone.Deleted, []string{formed.Created[0].ID}) || !slices.Equal(gone.Renewed, []string{"y1", "y2"}) {
		t.Fatalf("forget: got %+v", gone)
	}
	again, notes := Validate(Round{Perceptions: []Perception{y1, y2}, PivotalImportance: defaults.PivotalImportance},
		Answer{Add: []Add{{Text: "Tess hides things about the key.", Supports: IDs{"x1", "y1", "y2"}}}})
	if got, want := summary(again), []string{"create new-1 likely +y1 +y2 @9/9 about=Tess"}; !slices.Equal(got, want) {
		t.Errorf("re-formed: got %q, want %q", got, want)
	}
	if got, want := noteLines(notes), []string{"add[0] corrected: " + string(ReasonUnknownPerc)}; !slices.Equal(got, want) {
		t.Errorf("notes: got %q, want %q (the forgotten perception is no longer shown)", got, want)
	}
}
