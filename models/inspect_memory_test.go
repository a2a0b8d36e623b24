package models_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"troupe/belief"
	"troupe/models"
)

// Deleting one perception by hand takes what depends only on it, as
// forgetting its chat would for it alone: the beliefs citing it go (one
// that cites it among others too), the other perceptions they cited
// become new again, its index terms and evidence rows go; a belief that
// never cited it, the other perceptions and their index stay.
func TestDeletePerceptionCascade(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:delperc")
		lines := []string{"The lighthouse keeper hid the brass compass.", "Tess bargained for the saffron crate.", "Rain flooded the quartz cellar."}
		appendRecorded(t, st, chat, lines[0], lines[1],
			[]models.PlainEvent{{Kind: "line", Text: lines[0]}}, []models.PlainEvent{{Kind: "line", Text: lines[1]}})
		appendRecorded(t, st, chat, lines[2], "ok", []models.PlainEvent{{Kind: "line", Text: lines[2]}}, nil)
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": lines[0]}, 1: {"Maren": lines[1]}, 2: {"Maren": lines[2]}})
		p0, p1, p2 := perceptionID(t, st, "Maren", lines[0]), perceptionID(t, st, "Maren", lines[1]), perceptionID(t, st, "Maren", lines[2])
		both := belief.Belief{ID: models.NewID(), Text: "The keeper and Tess trade in secrets.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: p0, Turn: 1, Stance: belief.Supports}, {Perception: p1, Turn: 1, Stance: belief.Supports}}}
		other := belief.Belief{ID: models.NewID(), Text: "The cellar floods.", Confidence: belief.Likely, FormedTurn: 2, ChangedTurn: 2,
			Evidence: []belief.Evidence{{Perception: p2, Turn: 2, Stance: belief.Supports}}}
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Seen: []string{p0, p1, p2}, Changes: belief.Changes{Created: []belief.Belief{both, other}}}); err != nil {
			t.Fatal(err)
		}
		if ids := search(t, st, chat.SpaceID, "Maren", "compass"); !slices.Contains(ids, p0) {
			t.Fatalf("the perception is not indexed before the delete: %v", ids)
		}
		p, f, err := st.DeletePerception(ctx, p0)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != p0 || !slices.Equal(f.Deleted, []string{both.ID}) || !slices.Equal(f.Renewed, []string{p1}) {
			t.Errorf("deleted %s, beliefs %v renewed %v; want %s, [%s], [%s]", p.ID, f.Deleted, f.Renewed, p0, both.ID, p1)
		}
		views, err := st.Beliefs(ctx, chat.SpaceID, "Maren")
		if err != nil {
			t.Fatal(err)
		}
		if len(views) != 1 || views[0].ID != other.ID {
			t.Errorf("beliefs left %+v, want only %q", views, other.Text)
		}
		if ids := search(t, st, chat.SpaceID, "Maren", "compass brass lighthouse"); len(ids) != 0 {
			t.Errorf("the index still finds %v", ids)
		}
		if ids := search(t, st, chat.SpaceID, "Maren", "saffron"); !slices.Contains(ids, p1) {
			t.Errorf("the other perception left the index: %v", ids)
		}
		var n int64
		st.DB().Model(&models.BeliefEvidence{}).Where("perception_id = ?", p0).Count(&n)
		if n != 0 {
			t.Errorf("%d evidence rows still cite the deleted perception", n)
		}
		st.DB().Model(&models.Perception{}).Where("id = ?", p0).Count(&n)
		if n != 0 {
			t.Errorf("the perception is still stored")
		}
		var renewed, kept models.Perception
		st.DB().Where("id = ?", p1).Take(&renewed)
		st.DB().Where("id = ?", p2).Take(&kept)
		if renewed.Reflected || !kept.Reflected {
			t.Errorf("reflected: renewed %v (want false), untouched %v (want true)", renewed.Reflected, kept.Reflected)
		}
		st.DB().Model(&models.ReflectionSeen{}).Where("perception_id = ?", p1).Count(&n)
		if n != 0 {
			t.Errorf("the renewed perception is still marked seen")
		}
		if _, _, err := st.DeletePerception(ctx, p0); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("a second delete: %v, want ErrNotFound", err)
		}
	})
}
