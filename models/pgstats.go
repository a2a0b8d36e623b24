package models

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
)

// statsEvery is how often a PostgreSQL store looks for tables that have
// outgrown their planner statistics.
const statsEvery = 2 * time.Second

// statsMinRows is how many rows a table gains before its first statistics.
// Until then pgx's prepared statements keep plans made for an empty table:
// at 1,000, recall's load of perceptions by id scanned the whole table for
// the first half of troupe bench --channels 100 --turns 20 (auto_explain),
// and the run with 200 answered 6 % more turns, drain included, in seven
// runs alternated with it (190.4 against 179.6 turns/s on average).
const statsMinRows = 200

// grownTablesSQL lists this schema's tables that changed by three times
// the rows they held when their statistics were taken (grown fourfold),
// or by statsMinRows rows in a table never analyzed.
const grownTablesSQL = `SELECT relname, n_live_tup FROM pg_stat_user_tables
WHERE schemaname = current_schema() AND n_mod_since_analyze > GREATEST($1, 3 * (n_live_tup - n_mod_since_analyze))`

// startStatsKeeper analyzes, on PostgreSQL, each of the store's tables
// that has grown fourfold since its statistics were taken (grownTablesSQL).
// PostgreSQL's autovacuum does the same, but looks only once a minute
// (autovacuum_naptime) and waits for a tenth of a table to change: a young
// database under load kept the statistics of its first hundred rows, and
// pgx's prepared statements kept the plans made from them. Recall's reads
// by id were planned as hash joins over whole-table scans and stayed so
// while the tables grew tenfold: troupe bench --channels 100 --turns 20
// spent 3.3 and 2.7 ms on each, 70 % of its statement time (0.6 and 0.7
// with the keeper). An ANALYZE makes PostgreSQL plan every statement on
// the table again, so it is kept to a few in a table's life (a doubling
// each, tried first, put the realistic stream's p99 up by 3 ms); the
// keeper otherwise costs a look at pg_stat_user_tables every statsEvery.
// It runs on the bare connection pool, outside GORM and its hooks.
func (s *Store) startStatsKeeper(db *sql.DB) {
	tried := map[string]int64{}
	s.stopStats = every(statsEvery, func(ctx context.Context) { s.analyzeGrown(ctx, db, tried) })
}

// analyzeGrown analyzes the tables grownTablesSQL lists. tried holds each
// table's rows when it was last analyzed here: a table is tried again only
// once it has grown fourfold since, so neither one whose ANALYZE
// PostgreSQL skips (a role that does not own it) nor one whose rows change
// more than they grow (inbox_messages, chats) is analyzed every time.
func (s *Store) analyzeGrown(ctx context.Context, db *sql.DB, tried map[string]int64) {
	rows, err := db.QueryContext(ctx, grownTablesSQL, statsMinRows)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Debug("postgres: look for grown tables", "err", err)
		}
		return
	}
	var grown []string
	for rows.Next() {
		var name string
		var live int64
		if rows.Scan(&name, &live) != nil {
			continue
		}
		if live < 4*tried[name] {
			continue
		}
		tried[name] = max(live, 1)
		grown = append(grown, name)
	}
	rows.Close()
	for _, name := range grown {
		if err := analyzeTable(ctx, db, name); err != nil && ctx.Err() == nil {
			s.log.Debug("postgres: analyze grown table", "table", name, "err", err)
		}
	}
}

// analyzeTable analyzes one table, giving up at once when autovacuum
// holds it.
func analyzeTable(ctx context.Context, db *sql.DB, name string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '100ms'"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "ANALYZE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return err
	}
	return tx.Commit()
}
