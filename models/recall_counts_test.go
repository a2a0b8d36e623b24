package models_test

import (
	"context"
	"sync"
	"testing"

	"troupe/models"
	"troupe/models/testenv"
)

// Recall counts from many turns at once are gathered and written together:
// none is lost, a write adds each turn's count, and closing the store
// writes what was still gathered.
func TestRecallCountsGatherAndWrite(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st, err := models.Open(ctx, b.DSN, nil)
			if err != nil {
				t.Fatal(err)
			}
			chat := newChat(t, st, "console:counts")
			appendRecorded(t, st, chat, "The ferry leaves at dawn.", "*nods*",
				[]models.PlainEvent{{Kind: "action", Text: "The ferry leaves at dawn."}}, nil)
			appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
			recordAll(t, st, chat, "the ferry", map[int]map[string]string{0: {"Maren": "The ferry leaves at dawn.", "Tess": "Tess heard the ferry."}})
			maren, tess := perceptionID(t, st, "Maren", "The ferry leaves at dawn."), perceptionID(t, st, "Tess", "Tess heard the ferry.")

			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() {
					if err := st.NoteRecall(ctx, models.RecallDone{Perceptions: []string{maren, tess, models.NewID()}}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if err := st.FlushRecallCounts(ctx); err != nil {
				t.Fatal(err)
			}
			count := func(st *models.Store, id string) int {
				var p models.Perception
				if err := st.DB().Where("id = ?", id).Take(&p).Error; err != nil {
					t.Fatal(err)
				}
				return p.RecallCount
			}
			if m, ts := count(st, maren), count(st, tess); m != 50 || ts != 50 {
				t.Fatalf("counts after 50 recalls: Maren %d, Tess %d", m, ts)
			}
			// Nothing is written twice.
			if err := st.FlushRecallCounts(ctx); err != nil {
				t.Fatal(err)
			}
			if m := count(st, maren); m != 50 {
				t.Fatalf("a second write changed the count to %d", m)
			}
			// Counts still gathered when the store closes are written.
			if err := st.NoteRecall(ctx, models.RecallDone{Perceptions: []string{maren}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			again := testenv.OpenStore(t, b)
			if m := count(again, maren); m != 51 {
				t.Fatalf("count after close %d, want 51", m)
			}
		})
	}
}
