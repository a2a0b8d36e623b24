package sqlitestmt

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// open opens a pool of one connection on a new file, keeping size
// statements, with table t (k, v) holding rows 1..n.
func open(t *testing.T, size, n int) *sql.DB {
	t.Helper()
	c, err := Connector(filepath.Join(t.TempDir(), "t.db")+"?_pragma=journal_mode(WAL)&_txlock=immediate", size)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := db.Exec("INSERT INTO t (k, v) VALUES (?, ?)", i, strings.Repeat("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// state reports the statements the pool's one connection keeps, most
// recently used first, and how many it has prepared.
func state(t *testing.T, db *sql.DB) (kept []string, prepares int) {
	t.Helper()
	sc, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	err = sc.Raw(func(dc any) error {
		c := dc.(*conn)
		for e := c.order.Front(); e != nil; e = e.Next() {
			kept = append(kept, e.Value.(*cached).text)
		}
		prepares = c.prepares
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kept, prepares
}

func values(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAStatementIsPreparedOncePerConnection(t *testing.T) {
	db := open(t, 8, 0)
	_, before := state(t, db)
	for i := 1; i <= 50; i++ {
		if _, err := db.Exec("INSERT INTO t (k, v) VALUES (?, ?)", i, "x"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM t WHERE k <= ?", i).Scan(&n); err != nil || n != i {
			t.Fatalf("count after %d inserts: %d, %v", i, n, err)
		}
	}
	// In a transaction the same connection keeps using them.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t (k, v) VALUES (?, ?)", 51, "x"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	kept, after := state(t, db)
	if after-before != 2 {
		t.Errorf("101 executions of 2 statements prepared %d statements; want 2", after-before)
	}
	if !slices.Contains(kept, "INSERT INTO t (k, v) VALUES (?, ?)") || !slices.Contains(kept, "SELECT count(*) FROM t WHERE k <= ?") {
		t.Errorf("kept %q", kept)
	}
}

func TestTheSameStatementWhileItsRowsAreOpen(t *testing.T) {
	db := open(t, 8, 3)
	const q = "SELECT v FROM t WHERE k >= ? ORDER BY k"
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	outer, err := tx.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.Query(q, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v+":"+strings.Join(values(t, inner), ","))
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"v:vv,vvv", "vv:vv,vvv", "vvv:vv,vvv"}
	if !slices.Equal(got, want) {
		t.Fatalf("nested reads %q; want %q", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The kept statement is free again, and the temporary ones are closed:
	// the next reads prepare nothing.
	_, before := state(t, db)
	rows, err := db.Query(q, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v := values(t, rows); !slices.Equal(v, []string{"vvv"}) {
		t.Fatalf("read after %q", v)
	}
	if _, after := state(t, db); after != before {
		t.Errorf("a read of the kept statement prepared %d", after-before)
	}
}

func TestAStatementDroppedWhileReadIsClosedWithItsRows(t *testing.T) {
	db := open(t, 2, 3)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.Query("SELECT v FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	// Two other statements push it out of a cache of two while its rows
	// are open; its rows still read to the end.
	for _, q := range []string{"SELECT count(*) FROM t", "SELECT max(k) FROM t"} {
		var n int
		if err := tx.QueryRow(q).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%s: %d, %v", q, n, err)
		}
	}
	if v := values(t, rows); !slices.Equal(v, []string{"v", "vv", "vvv"}) {
		t.Fatalf("rows of the dropped statement: %q", v)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	kept, _ := state(t, db)
	if !slices.Equal(kept, []string{"SELECT max(k) FROM t", "SELECT count(*) FROM t"}) {
		t.Errorf("kept %q", kept)
	}
	rows, err = db.Query("SELECT v FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	if v := values(t, rows); len(v) != 3 {
		t.Fatalf("read again %q", v)
	}
}

func TestAKeptStatementAfterAnErrorAndASchemaChange(t *testing.T) {
	db := open(t, 8, 1)
	const ins = "INSERT INTO t (k, v) VALUES (?, ?)"
	if _, err := db.Exec(ins, 1, "again"); err == nil || !strings.Contains(err.Error(), "UNIQUE constraint failed") {
		t.Fatalf("a duplicate key: %v", err)
	}
	if _, err := db.Exec(ins, 2, "vv"); err != nil {
		t.Fatalf("the statement after its error: %v", err)
	}
	rows, err := db.Query("SELECT * FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	if cols, _ := rows.Columns(); len(cols) != 2 {
		t.Fatalf("columns %q", cols)
	}
	rows.Close()
	if _, err := db.Exec("ALTER TABLE t ADD COLUMN w TEXT NOT NULL DEFAULT 'w'"); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Query("SELECT * FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !slices.Equal(cols, []string{"k", "v", "w"}) {
		t.Fatalf("the kept SELECT * after a new column reads %q", cols)
	}
	var k int
	var v, w string
	if !rows.Next() {
		t.Fatal("no row")
	}
	if err := rows.Scan(&k, &v, &w); err != nil || k != 1 || w != "w" {
		t.Fatalf("row %d %q %q, %v", k, v, w, err)
	}
}

func TestAKeptStatementAfterItsContextEnded(t *testing.T) {
	db := open(t, 8, 3)
	const q = "SELECT v FROM t WHERE k >= ? ORDER BY k"
	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal("no first row")
	}
	cancel()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("rows after cancel: %v", err)
	}
	rows.Close()
	rows, err = db.Query(q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v := values(t, rows); !slices.Equal(v, []string{"vv", "vvv"}) {
		t.Fatalf("the statement after a canceled read: %q", v)
	}
}

// BenchmarkTurnRead is one of a turn's reads (a join with a sort) on a
// connection that keeps its statements and on one that prepares each
// time: go test -bench TurnRead ./internal/sqlitestmt/
func BenchmarkTurnRead(b *testing.B) {
	for _, size := range []int{0, 64} {
		name := "kept"
		if size == 0 {
			name = "prepared-each-time"
		}
		b.Run(name, func(b *testing.B) {
			c, err := Connector(filepath.Join(b.TempDir(), "b.db"), size)
			if err != nil {
				b.Fatal(err)
			}
			db := sql.OpenDB(c)
			defer db.Close()
			db.SetMaxOpenConns(1)
			for _, s := range []string{
				"CREATE TABLE m (id TEXT PRIMARY KEY, chat TEXT, parent TEXT, body TEXT)",
				"CREATE INDEX m_chat ON m (chat, id)",
				"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO m SELECT printf('%08d', i), printf('c%02d', i % 100), printf('%08d', i - 100), 'text' FROM n",
			} {
				if _, err := db.Exec(s); err != nil {
					b.Fatal(err)
				}
			}
			const q = `SELECT a.id, a.body, p.body FROM m AS a LEFT JOIN m AS p ON p.id = a.parent
  WHERE a.chat = ? AND a.id > ? ORDER BY a.id DESC LIMIT 20`
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				rows, err := db.Query(q, "c07", "00000000")
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != 20 {
					b.Fatalf("%d rows", n)
				}
			}
		})
	}
}
