package models_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"troupe/belief"
	"troupe/models"
)

// vectorRows gives each pending item a vector whose first value tells it
// apart.
func vectorRows(items []models.VectorItem, model string) []models.RecallVector {
	var out []models.RecallVector
	for i, it := range items {
		v := []float32{float32(i + 1), 0.5, -0.25}
		out = append(out, models.RecallVector{ItemID: it.ID, SpaceID: it.SpaceID, Character: it.Character, Model: model, Kind: it.Kind,
			ChatID: it.ChatID, Dims: len(v), Vector: models.EncodeVector(v)})
	}
	return out
}

func vectorIDs(t *testing.T, st *models.Store, space, char, model string, after int64) []string {
	t.Helper()
	vs, err := st.RecallVectors(context.Background(), models.VectorScan{SpaceID: space, Character: char, Model: model, AfterID: after, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.ItemID)
	}
	return ids
}

// The embedding job's store side: the chat's perceptions and the space's
// beliefs without a vector are pending until written; a character reads
// only its own vectors, and only those written after what it has; a long
// name fits PostgreSQL; a rewritten belief loses its vector, a deleted one
// and a forgotten chat take theirs along; an item gone before its vector is
// written gets none.
func TestRecallVectorsFollowTheirItems(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:vectors")
		long := strings.Repeat("长", models.NameSize)
		appendRecorded(t, st, chat, "The key is in the well.", "Hm.",
			[]models.PlainEvent{{Kind: "line", Text: "The key is in the well."}}, []models.PlainEvent{{Kind: "line", Text: "Hm."}})
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": "The key is in the well.", long: "钥匙在井里。"}})
		pid := perceptionID(t, st, "Maren", "The key is in the well.")
		bid := models.NewID()
		b := belief.Belief{ID: bid, Text: "Tess hides things in wells.", Confidence: belief.Likely, About: []string{"Tess"},
			FormedTurn: 1, ChangedTurn: 1, Evidence: []belief.Evidence{{Perception: pid, Turn: 1, Stance: belief.Supports}}}
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Seen: []string{pid}, Changes: belief.Changes{Created: []belief.Belief{b}}}); err != nil {
			t.Fatal(err)
		}
		pending, err := st.PendingVectors(ctx, chat.ID, "m1", 10)
		if err != nil || len(pending) != 3 {
			t.Fatalf("pending %+v (%v), want two perceptions and the belief", pending, err)
		}
		if owed, err := st.VectorsOwed(ctx, chat.ID, "m1"); err != nil || !owed {
			t.Errorf("owed = %v (%v), want true", owed, err)
		}
		if n, err := st.WriteVectors(ctx, vectorRows(pending, "m1")); err != nil || n != 3 {
			t.Fatalf("wrote %d (%v), want 3", n, err)
		}
		if again, err := st.PendingVectors(ctx, chat.ID, "m1", 10); err != nil || len(again) != 0 {
			t.Errorf("still pending after the write: %+v (%v)", again, err)
		}
		if owed, _ := st.VectorsOwed(ctx, chat.ID, "m1"); owed {
			t.Error("still owed after the write")
		}
		// Another model's vectors are owed anew.
		if other, _ := st.PendingVectors(ctx, chat.ID, "m2", 10); len(other) != 3 {
			t.Errorf("another model: %d pending, want 3", len(other))
		}
		maren := vectorIDs(t, st, chat.SpaceID, "Maren", "m1", 0)
		if len(maren) != 2 || !slices.Contains(maren, pid) || !slices.Contains(maren, bid) {
			t.Errorf("Maren's vectors %v, want her perception and belief", maren)
		}
		if got := vectorIDs(t, st, chat.SpaceID, long, "m1", 0); len(got) != 1 || slices.Contains(got, pid) {
			t.Errorf("the long-named character's vectors %v, want its one perception", got)
		}
		if got := vectorIDs(t, st, "console:other-space", "Maren", "m1", 0); len(got) != 0 {
			t.Errorf("another space's Maren read %v", got)
		}
		vs, _ := st.RecallVectors(ctx, models.VectorScan{SpaceID: chat.SpaceID, Character: "Maren", Model: "m1", Limit: 10})
		if got := vectorIDs(t, st, chat.SpaceID, "Maren", "m1", vs[len(vs)-1].ID); len(got) != 0 {
			t.Errorf("after the newest id: %v, want nothing", got)
		}
		if dec := models.DecodeVector(nil, vs[0].Vector); len(dec) != 3 || dec[1] != 0.5 || dec[2] != -0.25 || vs[0].Dims != 3 {
			t.Errorf("decoded %v (dims %d)", dec, vs[0].Dims)
		}

		// Reflection rewrites the belief: its vector goes, to be written
		// again for the new text.
		b.Text, b.ChangedTurn = "Tess hides keys in wells.", 2
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Changes: belief.Changes{Updated: []belief.Belief{b}}}); err != nil {
			t.Fatal(err)
		}
		if again, _ := st.PendingVectors(ctx, chat.ID, "m1", 10); len(again) != 1 || again[0].ID != bid {
			t.Errorf("after a rewrite pending %+v, want the belief", again)
		}
		if _, err := st.DeleteBelief(ctx, bid); err != nil {
			t.Fatal(err)
		}
		// Written after its item went: no vector.
		if n, err := st.WriteVectors(ctx, []models.RecallVector{{ItemID: bid, SpaceID: chat.SpaceID, Character: "Maren", Model: "m1",
			Kind: models.RecallBelief, Dims: 1, Vector: models.EncodeVector([]float32{1})}}); err != nil || n != 0 {
			t.Errorf("a deleted belief's vector: wrote %d (%v), want 0", n, err)
		}
		if got := vectorIDs(t, st, chat.SpaceID, "Maren", "m1", 0); !slices.Equal(got, []string{pid}) {
			t.Errorf("after deleting the belief Maren has %v, want only %s", got, pid)
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := st.DB().Model(&models.RecallVector{}).Count(&n).Error; err != nil || n != 0 {
			t.Errorf("%d vectors left after /forget (%v)", n, err)
		}
	})
}
