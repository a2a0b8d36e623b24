package models

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
)

// sqliteReaders is how many read-only connections a SQLite store keeps
// beside its one writer.
const sqliteReaders = 4

// openSQLiteReaders opens the read-only connections of a SQLite store and
// sends every statement that only reads, and runs outside a transaction,
// to them. In WAL mode readers never wait for the writer, nor the writer
// for them; with all statements on the one connection, a turn's dozen
// short reads each queued behind whatever a memory job was doing with it,
// and troupe bench's pipeline p99 was 100–200 ms while the recorder and
// reflection ran. Each read still sees every write committed before it
// began, so a turn reads what it has just stored.
func openSQLiteReaders(db *gorm.DB, path string) (*sql.DB, error) {
	writer, err := db.DB()
	if err != nil {
		return nil, err
	}
	readers, err := sql.Open(sqlite.DriverName, sqliteReaderDSN(path))
	if err != nil {
		return nil, err
	}
	readers.SetMaxOpenConns(sqliteReaders)
	readers.SetMaxIdleConns(sqliteReaders)
	route := func(tx *gorm.DB) {
		// Only the store's own pool is rerouted: a transaction (*sql.Tx)
		// or a pinned connection keeps its statements.
		if pool, ok := tx.Statement.ConnPool.(*sql.DB); !ok || pool != writer {
			return
		}
		if raw := tx.Statement.SQL.String(); raw != "" && !readOnlySQL(raw) {
			return
		}
		tx.Statement.ConnPool = readers
	}
	cb := db.Callback()
	if err := cb.Query().Before("gorm:query").Register("troupe:readers", route); err != nil {
		readers.Close()
		return nil, fmt.Errorf("readers: %w", err)
	}
	if err := cb.Row().Before("gorm:row").Register("troupe:readers", route); err != nil {
		readers.Close()
		return nil, fmt.Errorf("readers: %w", err)
	}
	return readers, nil
}

// readOnlySQL reports whether a raw statement only reads: a SELECT (which
// in SQLite cannot write). Anything else, PRAGMAs included, stays on the
// writer.
func readOnlySQL(q string) bool {
	q = strings.TrimSpace(q)
	return len(q) >= 6 && strings.EqualFold(q[:6], "select")
}

// sqliteReaderDSN is the DSN of a read-only connection: the writer's
// settings that apply to reading, and query_only, so a statement sent
// here by mistake fails instead of writing around the writer.
func sqliteReaderDSN(path string) string {
	q := sqliteParams()
	q.Del("_txlock")
	q.Add("_pragma", "query_only(1)")
	return withParams(path, q)
}
