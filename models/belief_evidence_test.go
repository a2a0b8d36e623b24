package models_test

import (
	"context"
	"slices"
	"testing"

	"troupe/belief"
	"troupe/models"
)

// A reflection round reads its beliefs without their links and then the
// links of the beliefs it checks or shows: BeliefEvidence gives each belief
// asked for the links Beliefs gives it (a check's contradiction included),
// nil for a belief without any, and nothing of a belief not asked for.
func TestBeliefEvidenceOfTheBeliefsAsked(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:evidence")
		lines := []string{"The gate was open.", "Tess had the key."}
		appendRecorded(t, st, chat, lines[0], lines[1],
			[]models.PlainEvent{{Kind: "line", Text: lines[0]}}, []models.PlainEvent{{Kind: "line", Text: lines[1]}})
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": lines[0]}, 1: {"Maren": lines[1]}})
		p0, p1 := perceptionID(t, st, "Maren", lines[0]), perceptionID(t, st, "Maren", lines[1])
		linked := belief.Belief{ID: models.NewID(), Text: "Tess opened the gate.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: p0, Turn: 1, Stance: belief.Supports}}}
		other := belief.Belief{ID: models.NewID(), Text: "The key is Tess's.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: p1, Turn: 1, Stance: belief.Supports}}}
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Changes: belief.Changes{Created: []belief.Belief{linked, other}}}); err != nil {
			t.Fatal(err)
		}
		doubted := linked
		doubted.Confidence = belief.Doubtful
		doubted.Evidence = append(slices.Clone(linked.Evidence), belief.Evidence{Perception: p1, Turn: 1, Stance: belief.Contradicts})
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Doubted: []belief.Belief{doubted}}); err != nil {
			t.Fatal(err)
		}
		round, err := st.LoadReflection(ctx, chat.SpaceID, "Maren", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(round.Beliefs) != 2 {
			t.Fatalf("round beliefs %+v", round.Beliefs)
		}
		for _, b := range round.Beliefs {
			if b.Evidence != nil {
				t.Errorf("the round read the links of %q: %v", b.Text, b.Evidence)
			}
		}
		views, err := st.Beliefs(ctx, chat.SpaceID, "Maren")
		if err != nil {
			t.Fatal(err)
		}
		missing := models.NewID()
		got, err := st.BeliefEvidence(ctx, []string{linked.ID, missing})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[missing]; !ok || got[missing] != nil || len(got) != 2 {
			t.Errorf("evidence %v: want the two ids asked, nil for the one without links", got)
		}
		for _, v := range views {
			if v.ID == linked.ID && !slices.Equal(got[linked.ID], v.Evidence) {
				t.Errorf("evidence %v, Beliefs gives %v", got[linked.ID], v.Evidence)
			}
		}
		if len(got[linked.ID]) != 2 || got[linked.ID][1].Stance != belief.Contradicts {
			t.Errorf("evidence %v: want the support and the check's contradiction", got[linked.ID])
		}
	})
}

// A belief's confidence history: formed by one reflection, raised by the
// next, lowered by a belief check, each a step at its turn; a rewrite at
// the same turn is one step; deleting the belief deletes its history.
func TestBeliefConfidenceHistory(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:history")
		lines := []string{"The gate was open.", "Tess had the key.", "The key was Olin's."}
		appendRecorded(t, st, chat, lines[0], lines[1],
			[]models.PlainEvent{{Kind: "line", Text: lines[0]}}, []models.PlainEvent{{Kind: "line", Text: lines[1]}})
		appendRecorded(t, st, chat, lines[2], "ok", []models.PlainEvent{{Kind: "line", Text: lines[2]}}, nil)
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": lines[0]}, 1: {"Maren": lines[1]}, 2: {"Maren": lines[2]}})
		p0, p1, p2 := perceptionID(t, st, "Maren", lines[0]), perceptionID(t, st, "Maren", lines[1]), perceptionID(t, st, "Maren", lines[2])
		install := func(r models.ReflectionInstall) {
			t.Helper()
			r.ChatID, r.CardID, r.SpaceID, r.Character = chat.ID, "maren", chat.SpaceID, "Maren"
			if err := st.InstallReflection(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		b := belief.Belief{ID: models.NewID(), Text: "Tess opened the gate.", Confidence: belief.Doubtful, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: p0, Turn: 1, Stance: belief.Supports}}}
		install(models.ReflectionInstall{Changes: belief.Changes{Created: []belief.Belief{b}}})
		b.Confidence, b.ChangedTurn = belief.Sure, 2
		b.Evidence = append(slices.Clone(b.Evidence), belief.Evidence{Perception: p1, Turn: 2, Stance: belief.Supports})
		install(models.ReflectionInstall{Changes: belief.Changes{Updated: []belief.Belief{b}}})
		b.Text = "Tess opened the gate with a key." // the same turn again, confidence kept
		install(models.ReflectionInstall{Changes: belief.Changes{Updated: []belief.Belief{b}}})
		b.Confidence, b.ChangedTurn = belief.Likely, 3
		b.Evidence = append(slices.Clone(b.Evidence), belief.Evidence{Perception: p2, Turn: 3, Stance: belief.Contradicts})
		install(models.ReflectionInstall{Doubted: []belief.Belief{b}})

		pg, err := st.CharacterBeliefs(ctx, chat.SpaceID, "Maren", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		type step struct {
			seq  int64
			conf int
			why  string
		}
		var got []step
		for _, c := range pg.Changes[b.ID] {
			got = append(got, step{c.Seq, c.Confidence, c.Why})
		}
		want := []step{{1, int(belief.Doubtful), models.ChangeFormed}, {2, int(belief.Sure), models.ChangeReflection}, {3, int(belief.Likely), models.ChangeCheck}}
		if !slices.Equal(got, want) {
			t.Errorf("history %+v, want %+v", got, want)
		}
		if _, err := st.DeleteBelief(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		var left int64
		if err := st.DB().Model(&models.BeliefChange{}).Where("belief_id = ?", b.ID).Count(&left).Error; err != nil || left != 0 {
			t.Errorf("%d steps of the deleted belief left (%v)", left, err)
		}
	})
}
