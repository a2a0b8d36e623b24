package models_test

import (
	"testing"
	"time"

	"troupe/models/testenv"
)

// TestStatsKeeperAnalyzesGrownTables: on PostgreSQL the store analyzes a
// table that has grown past its statistics (here a never-analyzed one
// given 300 rows, past statsMinRows) within seconds, long before
// autovacuum's minute, and leaves a table that has not grown alone.
func TestStatsKeeperAnalyzesGrownTables(t *testing.T) {
	testenv.Require(t)
	t.Parallel()
	st := testenv.OpenStore(t, testenv.Backend{Name: "postgres", DSN: testenv.FreshPostgresDB(t)})
	db := st.DB()
	// Autovacuum must not be who analyzes it.
	must(t, db.Exec(`ALTER TABLE recall_terms SET (autovacuum_enabled = false)`).Error)
	must(t, db.Exec(`INSERT INTO recall_terms (item_id, term, space_id, character_name, seq, kind, chat_id)
		SELECT lpad(g::text, 26, '0'), 'lamp', 'console:local:ada', 'Maren', g, 'p', '' FROM generate_series(1, 300) AS g`).Error)
	analyzed := func(table string) (manual, auto int64) {
		t.Helper()
		must(t, db.Raw(`SELECT analyze_count, autoanalyze_count FROM pg_stat_user_tables WHERE relname = ?`, table).
			Row().Scan(&manual, &auto))
		return manual, auto
	}
	// A backend that goes idle reports its changes within PostgreSQL's
	// idle interval (10 s); the keeper looks every 2 s.
	deadline := time.Now().Add(40 * time.Second)
	for {
		manual, auto := analyzed("recall_terms")
		if manual > 0 {
			if auto > 0 {
				t.Fatalf("recall_terms analyzed by autovacuum (%d) as well, with autovacuum off for it", auto)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("recall_terms has 300 rows and was never analyzed in 40 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if manual, _ := analyzed("beliefs"); manual > 0 {
		t.Fatalf("beliefs, empty, was analyzed %d times", manual)
	}
}
