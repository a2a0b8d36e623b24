package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/oklog/ulid/v2"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Store reads and writes troupe's tables.
type Store struct {
	db *gorm.DB
	// readers, on SQLite, are the read-only connections that statements
	// reading outside a transaction go to (openSQLiteReaders); nil on
	// PostgreSQL, whose pool serves both.
	readers *sql.DB
	// stopCheckpoints ends the SQLite checkpointer; nil on PostgreSQL.
	stopCheckpoints func()
	// stopStats ends the PostgreSQL statistics keeper; nil on SQLite.
	stopStats func()
	// walIndex reads SQLite's WAL-index header for the checkpointer; nil
	// on PostgreSQL. It is closed after every connection.
	walIndex *walIndex
	dialect  string
	log      *slog.Logger
	now      func() time.Time
	// spaces caches the ids of spaces known to exist.
	spaces sync.Map
	// counts counts the statements sent (statements.go).
	counts *statementCounter
	// recalls gathers recall counts until they are written (recall_counts.go).
	recalls *recallCounts
	// pause, when set (tests only: export_test.go), runs inside a memory
	// write's transaction once it holds its locks and has checked what it
	// writes, just before it writes: a test slows a write there to race it.
	pause func(point string)
}

// Open connects to dsn (sqlite://FILE or postgres://…) and migrates the schema.
func Open(ctx context.Context, dsn string, log *slog.Logger) (*Store, error) {
	s, err := Connect(dsn, log)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Connect opens the database without migrating it.
func Connect(dsn string, log *slog.Logger) (*Store, error) {
	// dialector is called for each attempt to open: a SQLite pool closed
	// after a failed one is not used again.
	var dialector func() (gorm.Dialector, error)
	dialect, path := "", ""
	switch {
	case strings.HasPrefix(dsn, "sqlite://"):
		dialect, path = "sqlite", strings.TrimPrefix(dsn, "sqlite://")
		if err := sqliteFolder(path); err != nil {
			return nil, err
		}
		dialector = func() (gorm.Dialector, error) {
			conn, err := openSQLite(sqliteDSN(path))
			if err != nil {
				return nil, err
			}
			return &sqlite.Dialector{Conn: conn}, nil
		}
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		dialect = "postgres"
		dialector = func() (gorm.Dialector, error) { return postgres.Open(dsn), nil }
	default:
		return nil, fmt.Errorf("models: database dsn must start with sqlite:// or postgres://")
	}
	gcfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		// pgx already caches statements per connection; GORM's own cache
		// would prepare again inside every transaction.
		PrepareStmt: false,
		NowFunc:     func() time.Time { return time.Now().UTC() },
	}
	open := func() (*gorm.DB, error) {
		d, err := dialector()
		if err != nil {
			return nil, err
		}
		return gorm.Open(d, gcfg)
	}
	db, err := open()
	// Processes opening one SQLite file at once (serve and a worker, or
	// several `troupe migrate`) can be refused while one of them turns it
	// to WAL: SQLite answers SQLITE_BUSY at once, without waiting out
	// busy_timeout, where waiting could deadlock. Opening again a moment
	// later finds it done.
	for wait := 20 * time.Millisecond; err != nil && dialect == "sqlite" && sqliteBusy(err) && wait < 5*time.Second; wait *= 2 {
		if db != nil {
			if sqlDB, derr := db.DB(); derr == nil {
				sqlDB.Close()
			}
		}
		time.Sleep(wait)
		db, err = open()
	}
	if err != nil {
		return nil, fmt.Errorf("models: open %s: %w", dialect, redactErr(err, dsn))
	}
	if err := registerSizeChecks(db); err != nil {
		return nil, fmt.Errorf("models: open %s: %w", dialect, err)
	}
	counts := &statementCounter{}
	if err := registerStatementCounts(db, counts); err != nil {
		return nil, fmt.Errorf("models: open %s: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("models: open %s: %w", dialect, err)
	}
	var readers *sql.DB
	if dialect == "sqlite" {
		// One writing connection: SQLite takes one writer at a time anyway, and
		// writers that collide wait in busy_timeout's sleeps (1, 2, 5, 10,
		// 25 ms…), which made the pipeline's p99 under load 60–120 ms.
		// Waiting in database/sql's queue instead wakes the next one at
		// once: troupe bench (100 channels) went to p99 ≈ 28 ms and 35% more
		// turns per second. Writers now wait at a gate before it
		// (writegate.go), a turn's before a memory job's. Nothing may write
		// through s.db while it holds a transaction. Reads outside a
		// transaction go to readers.
		sqlDB.SetMaxOpenConns(1)
		writer := &gatedPool{db: sqlDB, gate: newWriteGate(), counts: counts}
		db.ConnPool, db.Statement.ConnPool = writer, writer
		if readers, err = openSQLiteReaders(db, writer, path); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("models: open %s: %w", dialect, err)
		}
	} else {
		sqlDB.SetMaxOpenConns(32)
		// Keep every connection: opening new ones under load costs more
		// than the idle ones do.
		sqlDB.SetMaxIdleConns(32)
		if err := registerLostConnReset(db, sqlDB, 32); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("models: open %s: %w", dialect, err)
		}
		pool := jobCommitPool{DB: sqlDB, counts: counts}
		db.ConnPool, db.Statement.ConnPool = pool, pool
	}
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{db: db, readers: readers, dialect: dialect, log: log.With("component", "models"), now: func() time.Time { return time.Now().UTC() },
		recalls: newRecallCounts(), counts: counts}
	if dialect == "postgres" {
		s.startStatsKeeper(sqlDB)
	}
	if dialect == "sqlite" {
		if err := s.startCheckpointer(path); err != nil {
			readers.Close()
			sqlDB.Close()
			return nil, fmt.Errorf("models: open %s: %w", dialect, err)
		}
	}
	return s, nil
}

// sqliteFolder checks that the folder of a SQLite file exists: SQLite
// itself only says "out of memory (14)" when it cannot create the file.
func sqliteFolder(path string) error {
	file, _, _ := strings.Cut(path, "?")
	if file == "" || file == ":memory:" || strings.HasPrefix(file, "file::memory:") {
		return nil
	}
	dir := filepath.Dir(strings.TrimPrefix(file, "file:"))
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("models: sqlite: the folder %s of the database file does not exist: create it, or change database.dsn", dir)
	case err == nil && !st.IsDir():
		return fmt.Errorf("models: sqlite: %s, where the database file should go, is not a folder", dir)
	}
	return nil
}

func sqliteDSN(path string) string { return withParams(path, sqliteParams()) }

// sqliteBusy reports whether err is SQLite's "database is locked".
func sqliteBusy(err error) bool {
	return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
}

// sqliteParams are the settings of every SQLite connection.
func sqliteParams() url.Values {
	q := url.Values{}
	// busy_timeout first: turning a new file to WAL takes a lock, and
	// processes opening it at once (serve and worker) would otherwise
	// fail with SQLITE_BUSY instead of waiting.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Commits leave copying the WAL to the checkpointer (startCheckpointer).
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopFrames))
	// Deleted rows are overwritten with zeros, so a forgotten chat's text
	// does not stay in the file's free space.
	q.Add("_pragma", "secure_delete(1)")
	// A statement's journal (the pages it would roll back) stays in
	// memory: spilled to a temporary file past 64 KiB, as SQLite does by
	// default, it wrote a forgotten chat's pages to disk outside the
	// database, and the recorder's index writes spent 2% of troupe
	// bench's CPU in those writes.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	// Times are written as the driver troupe used before wrote them, so a
	// file's older and newer rows compare as text in one order.
	q.Set("_time_format", "sqlite")
	return q
}

func withParams(path string, q url.Values) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + q.Encode()
}

// redactErr returns err with the DSN's password cut out where it stands as
// a password: the DSN itself, the userinfo of a URL, a password=… setting.
// Never the same word elsewhere: with compose's DSN the password is
// "troupe", which is also the user and the database that the driver's
// errors name ("user=troupe database=troupe").
func redactErr(err error, dsn string) error {
	msg := err.Error()
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			msg = strings.ReplaceAll(msg, dsn, u.Redacted())
		}
	}
	if clean := redactSecrets(msg); clean != err.Error() {
		return errors.New(clean)
	}
	return err
}

// Secret values in text: the password of a URL's userinfo, the value of a
// password (or similar) key=value setting, quoted or not.
var (
	urlPassword = regexp.MustCompile(`(://[^/\s:@"'` + "`" + `]*:)[^@/\s"'` + "`" + `]+@`)
	pwSetting   = regexp.MustCompile(`(?i)\b((?:password|passwd|pwd|sslpassword|secret|token|api_?key)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s` + "`" + `'"]+)`)
)

// redactSecrets replaces the secret values in s (passwords in URLs and in
// key=value settings) with [redacted], leaving every other word as it is.
func redactSecrets(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}[redacted]@")
	return pwSetting.ReplaceAllString(s, "${1}[redacted]")
}

// checkpoint, on SQLite, copies the WAL into the database file and
// truncates it, so the page images of rows deleted by what (text that
// older WAL frames still hold) leave the disk now rather than at the next
// automatic checkpoint. A checkpoint that another process's reader blocks
// is logged: the text then stays in the WAL until a later one.
func (s *Store) checkpoint(ctx context.Context, what string) {
	if err := s.truncateWAL(ctx); err != nil {
		s.log.Warn("sqlite: WAL checkpoint after a deletion did not complete; the deleted text stays in the WAL until a later checkpoint",
			"after", what, "err", err)
	}
}

// truncateWAL, on SQLite, copies the whole WAL into the database file and
// truncates it. While the checkpointer (or another process) is
// checkpointing, SQLite answers busy at once: it is tried again for up to
// a second.
func (s *Store) truncateWAL(ctx context.Context) error {
	if s.dialect != "sqlite" {
		return nil
	}
	for deadline := time.Now().Add(time.Second); ; {
		var busy, frames, done int
		err := s.db.WithContext(ctx).Raw("PRAGMA wal_checkpoint(TRUNCATE)").Row().Scan(&busy, &frames, &done)
		if err == nil && busy != 0 {
			err = errors.New("a reader held the WAL")
		}
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Dialect is "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect }

// DB exposes the GORM handle for tests and maintenance commands.
func (s *Store) DB() *gorm.DB { return s.db }

// Migrate creates or updates every table. It holds the database's lock
// throughout, so that any number of processes (serve and worker starting
// together) may migrate one database at once: on PostgreSQL an advisory
// lock, on SQLite the write lock of one transaction holding the whole
// migration. Errors from taking the lock come back wrapped like the
// migration's.
func (s *Store) Migrate(ctx context.Context) error {
	if s.dialect == "postgres" {
		return s.migrateAdvisory(ctx)
	}
	return s.migrateSQLite(ctx)
}

// migrationLock is the PostgreSQL advisory lock key migrations hold
// ("troupe-m" in ASCII); every troupe process uses the same.
const migrationLock int64 = 0x74726f7570652d6d

// migrateAdvisory migrates under a session advisory lock, taken on a
// connection of its own that holds it until the migration ends: the
// concurrent CREATE TYPE and CREATE TABLE of two processes collide
// otherwise (duplicate key in pg_type). A process that dies drops its
// connection and with it the lock.
func (s *Store) migrateAdvisory(ctx context.Context) (err error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("models: migrate: %w", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("models: migrate: lock: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("models: migrate: lock: %w", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, uerr := conn.ExecContext(uctx, "SELECT pg_advisory_unlock($1)", migrationLock); uerr != nil {
			// The connection must not go back to the pool holding the
			// lock: closing it releases it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return s.migrate(s.db.WithContext(ctx))
}

// migrateSQLite migrates in one IMMEDIATE transaction (the DSN's _txlock),
// whose write lock keeps every other process out until it commits. Foreign
// keys are off meanwhile, as SQLite asks for schema changes that rebuild a
// table (a PRAGMA inside a transaction does nothing), and checked before
// the commit.
func (s *Store) migrateSQLite(ctx context.Context) error {
	db := s.db.WithContext(ctx)
	if err := db.Exec("PRAGMA foreign_keys = OFF").Error; err != nil {
		return fmt.Errorf("models: migrate: %w", err)
	}
	defer func() {
		if err := s.db.Exec("PRAGMA foreign_keys = ON").Error; err != nil {
			s.log.Error("sqlite: foreign keys left off after the migration", "err", err)
		}
	}()
	// The readers' open connections read the schema before the migration:
	// SQLite names the columns of a SELECT * prepared there from it, while
	// the rows come in the new layout. They are closed once it is done.
	defer s.renewReaders()
	return db.Transaction(func(tx *gorm.DB) error {
		if err := s.migrate(tx); err != nil {
			return err
		}
		rows, err := tx.Raw("PRAGMA foreign_key_check").Rows()
		if err != nil {
			return fmt.Errorf("models: migrate: foreign key check: %w", err)
		}
		defer rows.Close()
		if rows.Next() {
			return fmt.Errorf("models: migrate: the migrated tables break a foreign key")
		}
		return rows.Err()
	})
}

// renewReaders closes the idle reader connections (SQLite), so that the
// next reads open connections that know the current schema.
func (s *Store) renewReaders() {
	if s.readers != nil {
		s.readers.SetMaxIdleConns(0)
		s.readers.SetMaxIdleConns(sqliteReaders)
	}
}

// migrate runs the migration on db, under the lock Migrate took.
func (s *Store) migrate(db *gorm.DB) error {
	untracked := untrackedHandLines(db)
	if err := migrateRecapKey(db, s.dialect); err != nil {
		return fmt.Errorf("models: migrate: recaps by chat and card: %w", err)
	}
	if err := migrateRecallTerms(db, s.dialect); err != nil {
		return fmt.Errorf("models: migrate: recall index: %w", err)
	}
	flagged := !db.Migrator().HasTable(&Perception{}) || db.Migrator().HasColumn(&Perception{}, "reflected")
	if err := db.AutoMigrate(autoMigrated(s.dialect)...); err != nil {
		return fmt.Errorf("models: migrate: %w", err)
	}
	if err := migrateReflected(db, flagged); err != nil {
		return fmt.Errorf("models: migrate: reflected perceptions: %w", err)
	}
	if err := adoptHandLines(db, untracked); err != nil {
		return fmt.Errorf("models: migrate: hand lines: %w", err)
	}
	// idx_perception_story (space, character, seq) replaced an index of
	// its first two columns.
	if m := db.Migrator(); m.HasIndex(&Perception{}, "idx_perception_character") {
		if err := m.DropIndex(&Perception{}, "idx_perception_character"); err != nil {
			return fmt.Errorf("models: migrate: perception index: %w", err)
		}
	}
	if err := registerOldCastNames(db, s.now()); err != nil {
		return fmt.Errorf("models: migrate: cast names: %w", err)
	}
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// StopMaintenance ends the store's own background statements (on SQLite,
// the WAL checkpointer; on PostgreSQL, the statistics keeper) ahead of
// Close, which calls it too. Whoever hooks the database's callbacks after
// opening it calls it first: a hook registered while one of those
// statements runs is a data race in gorm, and the hook would count them as
// the caller's.
func (s *Store) StopMaintenance() {
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
	}
	if s.stopStats != nil {
		s.stopStats()
	}
}

// every calls tick every d, one call at a time, until stop (which waits
// for a call under way and may be called more than once); tick's context
// ends at stop. The PostgreSQL statistics keeper runs on it.
func every(d time.Duration, tick func(ctx context.Context)) (stop func()) {
	return repeat(d, func(ctx context.Context) time.Duration {
		tick(ctx)
		return d
	})
}

// repeat is every with the wait after each call chosen by the call: step
// runs first after d, then after whatever it last returned. The SQLite
// checkpointer runs on it.
func repeat(d time.Duration, step func(ctx context.Context) time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				t.Reset(step(ctx))
			}
		}
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-done
	})
}

// Close releases the connections.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	if err := s.closeRecallCounts(); err != nil {
		s.log.Warn("recall counts lost at close", "err", err)
	}
	s.StopMaintenance()
	if s.readers == nil {
		return sqlDB.Close()
	}
	err = errors.Join(s.readers.Close(), sqlDB.Close())
	if s.walIndex != nil {
		err = errors.Join(err, s.walIndex.close())
	}
	return err
}

// NewID returns a new sortable unique id.
func NewID() string { return ulid.Make().String() }

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

func unixTime(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

// paused calls the test pause, if any, at point.
func (s *Store) paused(point string) {
	if s.pause != nil {
		s.pause(point)
	}
}
