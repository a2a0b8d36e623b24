package models_test

import (
	"context"
	"strings"
	"testing"

	"troupe/memory/reflect"
	"troupe/models"
)

// A kept recall block shows a character's memories in another chat's
// prompts, so it goes when what it shows is forgotten: forgetting the chat
// of a perception it shows, or deleting a belief it shows, deletes it in
// every chat; a block showing neither stays. A long character name is
// fitted on both databases.
func TestKeptRecallGoesWithWhatItShows(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		told := newChat(t, st, "console:kept-told")
		appendRecorded(t, st, told, "Tess lied about the key.", "Hm.",
			[]models.PlainEvent{{Kind: "line", Text: "Tess lied about the key."}}, []models.PlainEvent{{Kind: "line", Text: "Hm."}})
		appendRecorded(t, st, told, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, told, "", map[int]map[string]string{0: {"Maren": "Tess lied about the key."}})
		pid := perceptionID(t, st, "Maren", "Tess lied about the key.")

		other := newChat(t, st, "console:kept-other")
		appendRecorded(t, st, other, "The boat is blue.", "Aye.",
			[]models.PlainEvent{{Kind: "line", Text: "The boat is blue."}}, []models.PlainEvent{{Kind: "line", Text: "Aye."}})
		appendRecorded(t, st, other, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, other, "", map[int]map[string]string{0: {"Maren": "The boat is blue."}})
		bid := models.NewID()
		b := reflect.Belief{ID: bid, Text: "The blue boat is Ada's.", Confidence: reflect.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []reflect.Evidence{{Perception: perceptionID(t, st, "Maren", "The boat is blue."), Turn: 1, Stance: reflect.Supports}}}
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: other.ID, CardID: "maren", SpaceID: other.SpaceID, Character: "Maren",
			Changes: reflect.Changes{Created: []reflect.Belief{b}}}); err != nil {
			t.Fatal(err)
		}

		// A third chat's prompts show them: one block each, and one that
		// shows neither.
		live := newChat(t, st, "console:kept-live")
		long := "Maren" + strings.Repeat(", Keeper of the Light on Gull Rock", 10)
		var msgs []string
		for i, items := range [][]string{{pid}, {bid}, {}} {
			u, _ := appendBeat(t, st, live.ID, i)
			msgs = append(msgs, u.ID)
			if err := st.KeepRecall(ctx, models.RecallKept{MessageID: u.ID, Character: long, ChatID: live.ID, Text: "[Remembered] block"}, items); err != nil {
				t.Fatalf("keep block %d: %v", i, err)
			}
		}
		kept := func() int {
			t.Helper()
			got, err := st.KeptRecalls(ctx, live.ID, long, msgs)
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if n := kept(); n != 3 {
			t.Fatalf("%d kept blocks, want 3", n)
		}
		if _, err := st.ForgetChat(ctx, told.ID, nil); err != nil {
			t.Fatal(err)
		}
		if n := kept(); n != 2 {
			t.Errorf("after forgetting the perception's chat: %d kept blocks, want 2", n)
		}
		if _, err := st.DeleteBelief(ctx, bid); err != nil {
			t.Fatal(err)
		}
		got, err := st.KeptRecalls(ctx, live.ID, long, msgs)
		if err != nil || len(got) != 1 || got[0].MessageID != msgs[2] {
			t.Errorf("after deleting the belief: %+v (%v), want only the block that shows neither", got, err)
		}
		if _, err := st.ForgetChat(ctx, live.ID, nil); err != nil {
			t.Fatal(err)
		}
		for _, m := range []any{&models.RecallKept{}, &models.RecallKeptItem{}} {
			var n int64
			if err := st.DB().Model(m).Count(&n).Error; err != nil || n != 0 {
				t.Errorf("%T: %d rows after forgetting the chat (%v)", m, n, err)
			}
		}
	})
}
