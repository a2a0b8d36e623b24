package models_test

import (
	"context"
	"sync"
	"testing"
	"time"

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
			maren, tess := ferryPerceptions(t, st, "console:counts")

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

// TestRecallCountsWaitForAHeldRow: on PostgreSQL a row another transaction
// holds (a reflection install marking its perceptions) does not make the
// write wait, or deadlock with it: its count is written on a later write,
// the others at once.
func TestRecallCountsWaitForAHeldRow(t *testing.T) {
	// Row locks are PostgreSQL's: SQLite writes one transaction at a time.
	testenv.Require(t)
	b := testenv.Backend{Name: "postgres", DSN: testenv.FreshPostgresDB(t)}
	ctx := context.Background()
	st := testenv.OpenStore(t, b)
	maren, tess := ferryPerceptions(t, st, "console:held-counts")
	count := func(id string) int {
		var p models.Perception
		if err := st.DB().Where("id = ?", id).Take(&p).Error; err != nil {
			t.Fatal(err)
		}
		return p.RecallCount
	}

	tx := st.DB().Begin()
	if err := tx.Exec("UPDATE perceptions SET reflected = true WHERE id = ?", maren).Error; err != nil {
		t.Fatal(err)
	}
	if err := st.NoteRecall(ctx, models.RecallDone{Perceptions: []string{maren, tess}}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := st.FlushRecallCounts(wctx)
	cancel()
	if err != nil {
		t.Fatalf("write beside a held row: %v", err)
	}
	if got := count(tess); got != 1 {
		t.Errorf("the free row's count is %d, want 1", got)
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if got := count(maren); got != 0 {
		t.Errorf("the held row's count is %d before the next write, want 0", got)
	}
	if err := st.FlushRecallCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if m, ts := count(maren), count(tess); m != 1 || ts != 1 {
		t.Errorf("counts after the next write: Maren %d, Tess %d; want 1 and 1", m, ts)
	}
}

// ferryPerceptions records, in a new chat of channel, one turn that Maren
// and Tess perceived, and returns their perceptions' ids.
func ferryPerceptions(t *testing.T, st *models.Store, channel string) (maren, tess string) {
	t.Helper()
	chat := newChat(t, st, channel)
	appendRecorded(t, st, chat, "The ferry leaves at dawn.", "*nods*",
		[]models.PlainEvent{{Kind: "action", Text: "The ferry leaves at dawn."}}, nil)
	appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
	recordAll(t, st, chat, "the ferry", map[int]map[string]string{0: {"Maren": "The ferry leaves at dawn.", "Tess": "Tess heard the ferry."}})
	return perceptionID(t, st, "Maren", "The ferry leaves at dawn."), perceptionID(t, st, "Tess", "Tess heard the ferry.")
}
