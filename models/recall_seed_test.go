package models_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"troupe/models"
)

// A bench's seeded store is settled before the turns: SQLite's WAL is
// copied into the database file and truncated, PostgreSQL's seeded tables
// are analyzed and vacuumed (and only they are analyzed).
func TestSettleLoadLeavesNoBulkLoadBehind(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		spec := models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: models.NewID(), N: 300, Seed: 4}
		must(t, st.SeedRecord(ctx, spec))
		if st.Dialect() == "sqlite" {
			wal := sqliteFile(t, st) + "-wal"
			before, err := os.Stat(wal)
			if err != nil {
				t.Fatal(err)
			}
			if before.Size() < 64<<10 {
				t.Fatalf("the seed left only %d bytes of WAL; the test needs a load to settle", before.Size())
			}
			must(t, st.SettleLoad(ctx))
			after, err := os.Stat(wal)
			if err != nil {
				t.Fatal(err)
			}
			// The checkpointer may start the WAL over with a page or two.
			if after.Size() > 16<<10 {
				t.Fatalf("WAL is %d bytes after settling (was %d)", after.Size(), before.Size())
			}
			return
		}
		// Planner statistics: the seeded tables have theirs; a table the
		// run fills itself is left unanalyzed, not recorded as empty.
		var analyzed []string
		must(t, st.DB().Raw(`SELECT relname FROM pg_stat_user_tables
			WHERE relname IN ('events', 'perceptions', 'recall_terms', 'messages') AND last_analyze IS NOT NULL
			ORDER BY relname`).Scan(&analyzed).Error)
		if got := strings.Join(analyzed, ", "); got != "events, perceptions, recall_terms" {
			t.Fatalf("analyzed after the seed: %s; want events, perceptions, recall_terms (never the empty messages)", got)
		}
		must(t, st.SettleLoad(ctx))
		var unvacuumed []string
		must(t, st.DB().Raw(`SELECT relname FROM pg_stat_user_tables
			WHERE relname IN ('events', 'perceptions', 'recall_terms') AND last_vacuum IS NULL`).Scan(&unvacuumed).Error)
		if len(unvacuumed) > 0 {
			t.Fatalf("not vacuumed after settling: %s", strings.Join(unvacuumed, ", "))
		}
	})
}

// sqliteFile is the path of a SQLite store's main database file.
func sqliteFile(t *testing.T, st *models.Store) string {
	t.Helper()
	var seq int
	var name, file string
	must(t, st.DB().Raw("PRAGMA database_list").Row().Scan(&seq, &name, &file))
	return file
}
