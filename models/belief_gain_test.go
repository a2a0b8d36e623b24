package models_test

import (
	"context"
	"errors"
	"testing"

	"troupe/belief"
	"troupe/models"
)

// A reflection that only adds links to beliefs it read writes those links,
// filed under their chats; one that takes links away rewrites them all; a
// belief whose read links went with a forgotten chat is gone, and its
// install is stale: nothing of it comes back.
func TestReflectionWritesTheLinksABeliefGained(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		x, y := newChat(t, st, "console:gain-x"), newChat(t, st, "console:gain-y")
		story := map[*models.Chat][]string{&x: {"The gate was open.", "Tess had the key."}, &y: {"The lamp was lit.", "The dog did not bark."}}
		for chat, lines := range story {
			appendRecorded(t, st, *chat, lines[0], lines[1],
				[]models.PlainEvent{{Kind: "line", Text: lines[0]}}, []models.PlainEvent{{Kind: "line", Text: lines[1]}})
			appendRecorded(t, st, *chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
			recordAll(t, st, *chat, "", map[int]map[string]string{0: {"Maren": lines[0]}, 1: {"Maren": lines[1]}})
		}
		gate, key := perceptionID(t, st, "Maren", "The gate was open."), perceptionID(t, st, "Maren", "Tess had the key.")
		lamp, dog := perceptionID(t, st, "Maren", "The lamp was lit."), perceptionID(t, st, "Maren", "The dog did not bark.")
		sup := func(id string, turn int64) belief.Evidence {
			return belief.Evidence{Perception: id, Turn: turn, Stance: belief.Supports}
		}
		against := func(id string, turn int64) belief.Evidence {
			return belief.Evidence{Perception: id, Turn: turn, Stance: belief.Contradicts}
		}
		install := func(chat models.Chat, r models.ReflectionInstall) error {
			r.ChatID, r.CardID, r.SpaceID, r.Character = chat.ID, "maren", chat.SpaceID, "Maren"
			return st.InstallReflection(ctx, r)
		}
		read := func(ids ...string) map[string][]belief.Evidence {
			t.Helper()
			ev, err := st.BeliefEvidence(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		links := func(id string) map[string]models.BeliefEvidence {
			t.Helper()
			var rows []models.BeliefEvidence
			if err := st.DB().Where("belief_id = ?", id).Find(&rows).Error; err != nil {
				t.Fatal(err)
			}
			out := map[string]models.BeliefEvidence{}
			for _, r := range rows {
				out[r.PerceptionID] = r
			}
			return out
		}
		chatOf := map[string]string{gate: x.ID, key: x.ID, lamp: y.ID, dog: y.ID}

		held := belief.Belief{ID: models.NewID(), Text: "Tess opened the gate.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{sup(gate, 1), sup(key, 1)}}
		doubted := belief.Belief{ID: models.NewID(), Text: "The house sleeps early.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{sup(lamp, 1), against(key, 1)}}
		if err := install(y, models.ReflectionInstall{Changes: belief.Changes{Created: []belief.Belief{held, doubted}}}); err != nil {
			t.Fatal(err)
		}

		// Gained: the belief's links are those read and the new one, each
		// under its own chat; the doubted belief's contradictions, old and
		// new, are filed as checks under theirs.
		r := read(held.ID, doubted.ID)
		held.Evidence = append(append([]belief.Evidence(nil), r[held.ID]...), sup(lamp, 2))
		held.ChangedTurn = 2
		doubted.Evidence = append(append([]belief.Evidence(nil), r[doubted.ID]...), against(dog, 2))
		doubted.Confidence = belief.Doubtful
		if err := install(y, models.ReflectionInstall{Doubted: []belief.Belief{doubted}, Changes: belief.Changes{Updated: []belief.Belief{held}}, Read: r}); err != nil {
			t.Fatal(err)
		}
		got := links(held.ID)
		if len(got) != 3 {
			t.Errorf("links after a gain: %v, want gate, key and lamp", got)
		}
		for id, l := range got {
			if l.ChatID != chatOf[id] {
				t.Errorf("link to %s filed under chat %q, want %q", id, l.ChatID, chatOf[id])
			}
		}
		var checks []models.BeliefCheck
		if err := st.DB().Where("belief_id = ?", doubted.ID).Find(&checks).Error; err != nil || len(checks) != 2 {
			t.Fatalf("checks of the doubted belief: %+v (%v), want key and dog", checks, err)
		}
		for _, c := range checks {
			if c.ChatID != chatOf[c.PerceptionID] {
				t.Errorf("check against %s filed under chat %q, want %q", c.PerceptionID, c.ChatID, chatOf[c.PerceptionID])
			}
		}

		// Taken away: the stored links are made the belief's.
		r = read(held.ID)
		held.Evidence = []belief.Evidence{sup(gate, 1), sup(lamp, 2)}
		if err := install(y, models.ReflectionInstall{Changes: belief.Changes{Updated: []belief.Belief{held}}, Read: r}); err != nil {
			t.Fatal(err)
		}
		if got := links(held.ID); len(got) != 2 || got[key].PerceptionID != "" {
			t.Errorf("links after one was taken away: %v, want gate and lamp", got)
		}

		// Read in part, a belief's links may only grow: an install that
		// would take one away is refused and changes nothing.
		r, err := st.BeliefLinksTo(ctx, []string{held.ID}, []string{lamp})
		if err != nil || len(r[held.ID]) != 1 {
			t.Fatalf("links of the belief to the lamp: %v (%v)", r, err)
		}
		shrunk := held
		shrunk.Evidence = nil
		if err := install(y, models.ReflectionInstall{Changes: belief.Changes{Updated: []belief.Belief{shrunk}}, Read: r, Partial: true}); err == nil || errors.Is(err, models.ErrStale) {
			t.Errorf("an install taking away links it read in part: %v, want a refusal", err)
		}
		if got := links(held.ID); len(got) != 2 {
			t.Errorf("links after a refused install: %v, want gate and lamp", got)
		}

		// Forgotten meanwhile: the chat x the belief cites goes between the
		// read and the install, and the belief with it.
		r = read(held.ID)
		if _, err := st.ForgetChat(ctx, x.ID); err != nil {
			t.Fatal(err)
		}
		held.Evidence = append(append([]belief.Evidence(nil), r[held.ID]...), sup(dog, 2))
		err = install(y, models.ReflectionInstall{Changes: belief.Changes{Updated: []belief.Belief{held}}, Read: r})
		if !errors.Is(err, models.ErrStale) {
			t.Fatalf("install over a forgotten chat's belief: %v, want ErrStale", err)
		}
		var n int64
		if err := st.DB().Model(&models.Belief{}).Where("id = ?", held.ID).Count(&n).Error; err != nil || n != 0 {
			t.Errorf("the belief citing the forgotten chat: %d rows (%v)", n, err)
		}
		if got := links(held.ID); len(got) != 0 {
			t.Errorf("links of the forgotten belief: %v", got)
		}
	})
}
