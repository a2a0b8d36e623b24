package models

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
	"troupe/internal/sqlitestmt"
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
func openSQLiteReaders(db *gorm.DB, writer gorm.ConnPool, path string) (*sql.DB, error) {
	readers, err := openSQLite(sqliteReaderDSN(path))
	if err != nil {
		return nil, err
	}
	readers.SetMaxOpenConns(sqliteReaders)
	readers.SetMaxIdleConns(sqliteReaders)
	route := func(tx *gorm.DB) {
		// Only the store's own pool is rerouted: a transaction (*sql.Tx)
		// or a pinned connection keeps its statements.
		if tx.Statement.ConnPool != writer {
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
// in SQLite cannot write), or a WITH whose statement writes nothing (the
// branch walks). Anything else, PRAGMAs included, stays on the writer.
func readOnlySQL(q string) bool {
	q = strings.TrimSpace(q)
	switch {
	case len(q) >= 6 && strings.EqualFold(q[:6], "select"):
		return true
	case len(q) >= 4 && strings.EqualFold(q[:4], "with"):
		if ro, ok := withReadOnly.Load(q); ok {
			return ro.(bool)
		}
		ro := !writingWord.MatchString(q)
		// The WITH statements are a few fixed texts (the branch walks),
		// sent on every turn; the regexp over them cost more than the
		// lookup. The count bounds the cache should a text ever vary.
		if withCached.Load() < maxWithCached {
			withCached.Add(1)
			withReadOnly.Store(q, ro)
		}
		return ro
	}
	return false
}

// withReadOnly caches readOnlySQL's answer for a WITH statement's text.
var (
	withReadOnly sync.Map
	withCached   atomic.Int32
)

const maxWithCached = 64

// writingWord finds a statement's writing verb; the statements' own text
// is in the query, never a message's (those are parameters).
var writingWord = regexp.MustCompile(`(?i)\b(insert|update|delete|replace)\b`)

// sqliteReaderDSN is the DSN of a read-only connection: the writer's
// settings that apply to reading, and query_only, so a statement sent
// here by mistake fails instead of writing around the writer.
func sqliteReaderDSN(path string) string {
	q := sqliteParams()
	q.Del("_txlock")
	q.Add("_pragma", "query_only(1)")
	return withParams(path, q)
}

// checkpointEvery is how often the checkpointer looks at the WAL; after a
// tick that found a backlog, it looks again after checkpointSoon, so that
// a steady writer's WAL is copied a little at a time (commits no longer
// copy it; see startCheckpointer).
const (
	checkpointEvery = 100 * time.Millisecond
	checkpointSoon  = 10 * time.Millisecond
)

// checkpointBacklog is how many WAL frames (pages) not yet copied into the
// database file make the checkpointer copy them.
const checkpointBacklog = 200

// walRestartFrames is the WAL's length in frames (8 MiB of 4 KiB pages)
// past which the checkpointer waits, briefly, for the readers that still
// use the WAL (checkpointWait), so that the next write starts it over.
const walRestartFrames = 2048

// checkpointWait bounds that wait: while it lasts, writers wait too (at
// 50 ms for every RESTART, troupe bench's pipeline p99 was 28–41 ms; at 10
// ms, 27–28). A WAL that grew to twice walRestartFrames all the same (its
// readers were slow to finish: a loaded machine) gets the longer
// checkpointLongWait.
const (
	checkpointWait     = 10 * time.Millisecond
	checkpointLongWait = 50 * time.Millisecond
)

// restartWait is how long a RESTART checkpoint of a WAL of length frames
// waits for its readers.
func restartWait(length int) time.Duration {
	if length >= 2*walRestartFrames {
		return checkpointLongWait
	}
	return checkpointWait
}

// walBackstopFrames is the WAL's length past which a commit copies it
// itself (SQLite's wal_autocheckpoint; see startCheckpointer).
const walBackstopFrames = 2 * walRestartFrames

// checkpointModes are the checkpoints one tick runs, in order, for a WAL
// of length frames with backlog not yet copied (ok: the WAL-index was
// read).
func checkpointModes(length, backlog int, ok bool) []string {
	if !ok || length < walRestartFrames {
		return []string{"PASSIVE"}
	}
	if backlog > 0 {
		return []string{"PASSIVE", "RESTART"}
	}
	return []string{"RESTART"}
}

// startCheckpointer copies the WAL into the database file, on a connection
// of its own, in PASSIVE mode (it waits for no reader or writer, and none
// waits for it), whenever checkpointBacklog frames wait to be copied.
//
// SQLite's own checkpoint runs in the committing connection, after its
// commit: on the one writer, which holds the write gate meanwhile. At
// SQLite's default of 1000 pages, every commit made while the WAL was
// that long copied the pages written since the last copy and synced the
// WAL and the database file, so a turn's or a job's commit waited for the
// disk. In troupe bench (100 channels × 20 turns) the writer was held
// 7.0–7.7 s of a 9 s run, and less than half of that on the CPU; perf
// sched counted 4,100 waits for the disk in commits against 770 in the
// checkpointer. Commits now copy only a WAL of walBackstopFrames or more,
// one the checkpointer failed to start over at walRestartFrames: a
// commit's copy is whole, since nothing is written during it, which gives
// the next write its chance to start the WAL over. troupe bench, drain
// included, went from 197.3–206.7 turns/s to 223.6–230.4, and its p99
// stayed at 27–31 ms (alternated, one sitting). With the backstop at
// walRestartFrames instead, 217.8–220.7 turns/s at p99 31.5–32.7 ms.
//
// The write that starts a fully copied WAL over syncs the WAL file, which
// took a turn's commit 15–190 ms now and then on the test machine's disk;
// copying every few frames made that every turn. So the checkpointer copies
// only a backlog, and when it has copied the whole WAL it starts it over
// itself, with a write that gives way to turns (primeWAL).
//
// That write starts the WAL over only when no reader still reads frames of
// it, and readers that never pause (a busy process's, whose statements are
// kept prepared and so run back to back) can always be one step ahead: the
// WAL then grew past 40 MB in a test. Once it holds walRestartFrames, the
// checkpointer copies in RESTART mode, which waits up to checkpointWait for
// those readers to finish (readers starting meanwhile read the database
// file alone), and the write after it starts the WAL over. RESTART holds
// off writers while it copies and syncs, so the backlog is copied first in
// PASSIVE mode, and RESTART finds only the frames written since (without
// it, troupe bench's pipeline p99 went from 27 ms to 57–62 ms).
//
// A process that does not run long (a CLI command) leaves the copying to
// the last connection's close, as SQLite does.
func (s *Store) startCheckpointer(path string) error {
	s.walIndex = &walIndex{path: path + "-shm"}
	q := sqliteParams()
	q.Del("_txlock")
	// The busy timeout is RESTART's wait for readers.
	pragmas := slices.DeleteFunc(q["_pragma"], func(p string) bool { return strings.HasPrefix(p, "busy_timeout(") })
	q["_pragma"] = append([]string{fmt.Sprintf("busy_timeout(%d)", checkpointWait.Milliseconds())}, pragmas...)
	conn, err := openSQLite(withParams(path, q))
	if err != nil {
		return err
	}
	conn.SetMaxOpenConns(1)
	stop := repeat(checkpointEvery, func(ctx context.Context) time.Duration {
		length, backlog, ok := s.walIndex.frames()
		if ok && backlog < checkpointBacklog && length < walRestartFrames {
			return checkpointEvery
		}
		// Another checkpoint running, or a reader at the WAL's end, makes
		// it a partial copy or a busy one: a later tick copies the rest.
		var busy, frames, copied int
		for _, mode := range checkpointModes(length, backlog, ok) {
			if mode == "RESTART" {
				if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", restartWait(length).Milliseconds())); err != nil {
					return checkpointEvery
				}
			}
			err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Debug("sqlite: WAL checkpoint", "mode", mode, "err", err)
				}
				return checkpointEvery
			}
		}
		if busy == 0 && frames > 0 && copied == frames {
			s.primeWAL(ctx)
		}
		// The WAL is being written: look again soon, so that it is copied
		// a little at a time and started over before it grows long.
		return checkpointSoon
	})
	s.stopCheckpoints = sync.OnceFunc(func() {
		stop()
		conn.Close()
	})
	return nil
}

// primeWAL makes a write of one page (the database header's user version,
// set to what it is), so that it is this write, not a turn's, that finds
// the WAL fully copied, starts it over and syncs it.
func (s *Store) primeWAL(ctx context.Context) {
	db := s.db.WithContext(Background(ctx))
	var v int64
	if err := db.Raw("PRAGMA user_version").Row().Scan(&v); err != nil {
		return
	}
	if err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)).Error; err != nil && ctx.Err() == nil {
		s.log.Debug("sqlite: start the WAL over", "err", err)
	}
}

// walIndex reads the header of a SQLite database's WAL-index file (the
// -shm file) through one descriptor, held until every connection of the
// store is closed. POSIX drops every lock a process holds on a file when
// the process closes any descriptor of it, and SQLite keeps its locks
// between processes as locks on this file, among them the one that tells a
// newly opened process that it is not the first (and so must not reset the
// index). Opening and closing the file on each tick dropped them: a worker
// started beside this process then reset the index under it, and reads of
// the index it had mapped faulted (SIGBUS, in a CI run of the crash tests).
type walIndex struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// frames reads the WAL's length in frames since it was last started over
// (mxFrame) and how many of them are not yet copied into the database file
// (mxFrame − nBackfill). The layout is SQLite's documented one
// (walformat.html): the header's mxFrame at byte 16, nBackfill at byte 96,
// in the machine's byte order. ok is false when it cannot be read.
func (w *walIndex) frames() (length, backlog int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		f, err := os.Open(w.path)
		if err != nil {
			return 0, 0, false
		}
		w.f = f
	}
	var b [100]byte
	if _, err := w.f.ReadAt(b[:], 0); err != nil {
		return 0, 0, false
	}
	mx, back := binary.NativeEndian.Uint32(b[16:20]), binary.NativeEndian.Uint32(b[96:100])
	if back > mx {
		return int(mx), 0, true
	}
	return int(mx), int(mx - back), true
}

// close closes the descriptor: only once no connection of this process
// has the database open, or it would drop their locks.
func (w *walIndex) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// sqliteStatements is how many prepared statements each SQLite connection
// keeps. troupe bench's 100 channels × 20 turns prepare 105–125 distinct
// statements on a reader and about 280 on the writer, whose rarest ones
// (lists of a length seen once) then go.
const sqliteStatements = 256

// openSQLite opens a pool of SQLite connections that keep their prepared
// statements (sqlitestmt).
func openSQLite(dsn string) (*sql.DB, error) {
	c, err := sqlitestmt.Connector(dsn, sqliteStatements)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}
