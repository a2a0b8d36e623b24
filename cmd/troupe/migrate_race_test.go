package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"troupe/models"
	"troupe/models/testenv"
)

// migrateRuns is how many times TestConcurrentMigrate starts its processes
// on an empty database: 20 with TROUPE_SLOW_TESTS (scripts/test sets it in
// CI), a few otherwise.
func migrateRuns() int {
	if os.Getenv("TROUPE_SLOW_TESTS") != "" {
		return 20
	}
	return 4
}

// TestConcurrentMigrate: four `troupe migrate` processes started at once on
// one empty database (as serve and worker are by a first `docker compose
// up`) all succeed, run after run, on PostgreSQL and on one SQLite file,
// and leave the schema whole.
func TestConcurrentMigrate(t *testing.T) {
	bin := troupeBinary(t)
	backends := []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", sqliteDSN},
		{"postgres", func(t *testing.T) string { testenv.Require(t); return testenv.FreshPostgresDB(t) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			failures := 0
			for run := range migrateRuns() {
				dsn := b.dsn(t)
				if errs := migrateAtOnce(t, bin, dsn, 4); len(errs) > 0 {
					failures++
					t.Errorf("run %d: %d of 4 processes failed; the first: %s", run, len(errs), errs[0])
					continue
				}
				checkMigrated(t, dsn)
			}
			if failures > 0 {
				t.Errorf("%d of %d runs failed", failures, migrateRuns())
			}
		})
	}
}

// migrateAtOnce starts n `troupe migrate` processes on dsn together and
// returns what those that failed said.
func migrateAtOnce(t *testing.T, bin, dsn string, n int) []string {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	start := make(chan struct{})
	for range n {
		cmd := exec.Command(bin, "migrate")
		cmd.Env = append(os.Environ(), "TROUPE_DATABASE_DSN="+dsn, "TROUPE_LOG_LEVEL=error", "TROUPE_CARDS_DIR="+t.TempDir(), "TROUPE_OPS_LISTEN=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				done <- err
			} else {
				go func() { done <- cmd.Wait() }()
			}
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				err = fmt.Errorf("still running after a minute: %w", <-done)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%v: %s", err, out.String()))
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// checkMigrated opens the migrated database without migrating it and
// checks that every table is there.
func checkMigrated(t *testing.T, dsn string) {
	t.Helper()
	st, err := models.Connect(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, m := range models.All() {
		if !st.DB().Migrator().HasTable(m) {
			t.Errorf("table of %T missing after the migrations", m)
		}
	}
}
