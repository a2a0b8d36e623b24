package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"troupe/models"
)

// TestReorganizeDue: each installed consolidation counts toward the card
// and space's next reorganize, in its own transaction; the pair is due
// after the writes or tokens reach a threshold, or at night for a pair
// with writes since a run before it; an installed reorganize resets the
// counters and records the run.
func TestReorganizeDue(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:reorg-due")
		key := models.MemoryKey{CardID: chat.CardID, SpaceID: chat.SpaceID}
		write := func(n, tokens int) {
			t.Helper()
			for i := range n {
				// Each consolidation in two slices (a small scribe
				// window): only the first counts.
				for slice := range 2 {
					cur, err := st.LoadMemory(ctx, key.CardID, key.SpaceID)
					must(t, err)
					text := "- fact " + string(rune('a'+i)) + fmt.Sprint(slice) + " [chat:" + chat.ID + "]"
					must(t, st.InstallConsolidation(ctx, models.Consolidation{CardID: key.CardID, SpaceID: key.SpaceID, Version: cur.Version(),
						Handbook: cur.Handbook + "\n" + text, Resident: text, Tokens: tokens, Continues: slice > 0}))
				}
			}
		}
		due := func(night time.Time) bool {
			t.Helper()
			keys, err := st.ReorganizeDue(ctx, 5, 40000, night)
			must(t, err)
			return len(keys) == 1 && keys[0] == key
		}
		write(4, 100)
		if due(time.Time{}) {
			t.Errorf("due after 4 writes of 400 tokens, want not yet")
		}
		if !due(time.Now().Add(time.Hour)) {
			t.Errorf("not due at a night after the writes")
		}
		write(1, 100)
		if !due(time.Time{}) {
			t.Errorf("not due after 5 writes")
		}
		cur, err := st.LoadMemory(ctx, key.CardID, key.SpaceID)
		must(t, err)
		_, err = st.InstallReorganize(ctx, models.ReorganizeInstall{CardID: key.CardID, SpaceID: key.SpaceID, Character: "Ada", Version: cur.Version(), Handbook: cur.Handbook})
		must(t, err)
		if due(time.Time{}) || due(time.Now().Add(-time.Minute)) {
			t.Errorf("due right after a reorganize")
		}
		rs, err := st.Reorganize(ctx, key.CardID, key.SpaceID)
		must(t, err)
		if _, ok := rs.Change(); !ok || rs.Batches != 0 {
			t.Errorf("state after a run = %+v, want it recorded and reset", rs)
		}
		write(1, 40000)
		if !due(time.Time{}) {
			t.Errorf("not due after 40000 tokens written")
		}
	})
}

// TestForgetClearsJudgedPairs: the pairs a reorganize judged different
// are hashes of handbook wording, the forgotten chat's among them; /forget
// leaves none of them behind.
func TestForgetClearsJudgedPairs(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:reorg-forget")
		cur, err := st.LoadMemory(ctx, chat.CardID, chat.SpaceID)
		must(t, err)
		_, err = st.InstallReorganize(ctx, models.ReorganizeInstall{CardID: chat.CardID, SpaceID: chat.SpaceID, Character: "Ada",
			Version: cur.Version(), Handbook: cur.Handbook, Judged: "pair-one\npair-two"})
		must(t, err)
		rs, err := st.Reorganize(ctx, chat.CardID, chat.SpaceID)
		must(t, err)
		if rs.Judged == "" {
			t.Fatal("the installed reorganize kept no judged pairs; the test sees nothing")
		}
		_, err = st.ForgetChat(ctx, chat.ID)
		must(t, err)
		rs, err = st.Reorganize(ctx, chat.CardID, chat.SpaceID)
		must(t, err)
		if rs.Judged != "" {
			t.Errorf("judged pairs after /forget = %q, want none", rs.Judged)
		}
	})
}
