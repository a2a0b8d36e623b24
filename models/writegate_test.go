package models_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"troupe/models"
	"troupe/models/testenv"
)

// sqliteStore opens a fresh SQLite store and returns it with its file.
func sqliteStore(t *testing.T) (*models.Store, string) {
	t.Helper()
	b := testenv.Backends(t)[0]
	return testenv.OpenStore(t, b), strings.TrimPrefix(b.DSN, "sqlite://")
}

// waitForWriterWaits waits until n writes in all have found SQLite's
// writer taken.
func waitForWriterWaits(t *testing.T, st *models.Store, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for models.WriterWaits(st) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes waited for the writer, want %d", models.WriterWaits(st), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// On SQLite a turn's write goes before memory jobs' writes already waiting
// for the one writing connection: it waits only for the transaction that
// holds it.
func TestSQLiteTurnWritesGoBeforeWaitingJobs(t *testing.T) {
	st, _ := sqliteStore(t)
	chat := newChat(t, st, "console:gate")
	_, reply := appendBeat(t, st, chat.ID, 1)
	jobCtx := models.Background(context.Background())
	// The job writes must still be giving way when the turn's comes, on a
	// loaded machine too.
	models.SetWriteDefer(st, time.Minute)

	reached, release := make(chan struct{}), make(chan struct{})
	models.SetPause(st, func(p string) {
		if p == "install summary" {
			close(reached)
			<-release
		}
	})
	defer models.SetPause(st, nil)
	installed := make(chan error, 1)
	go func() {
		_, err := st.InstallSummary(jobCtx, chat.ID, "", reply.ID, "A summary.", 1)
		installed <- err
	}()
	<-reached

	// Each write inserts a row; SQLite numbers rows in the order their
	// transactions ran, which is the order the writes got the writer (when
	// each call returned depends on the scheduler too).
	write := func(ctx context.Context, kind, key string) {
		if err := st.RecordJob(ctx, models.JobRecord{Kind: kind, Key: key, Outcome: "written"}); err != nil {
			t.Errorf("%s write: %v", kind, err)
		}
	}
	var wg sync.WaitGroup
	base := models.WriterWaits(st)
	for i := range 3 {
		wg.Go(func() { write(jobCtx, "compact", fmt.Sprintf("k%d", i)) })
	}
	waitForWriterWaits(t, st, base+3)
	wg.Go(func() { write(context.Background(), "turn", chat.ID) })
	waitForWriterWaits(t, st, base+4)
	close(release)
	if err := <-installed; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	var order []string
	if err := st.DB().Raw("SELECT kind FROM job_records WHERE kind IN ('compact', 'turn') ORDER BY rowid").Scan(&order).Error; err != nil {
		t.Fatal(err)
	}
	if len(order) != 4 || order[0] != "turn" {
		t.Errorf("writes got the writer in the order %v; the turn's should be first", order)
	}
}

// A memory job's write gives way to turns' writes for a while only: under
// a steady stream of them it still gets the writer.
func TestSQLiteJobWritesAreNotStarvedByTurns(t *testing.T) {
	st, _ := sqliteStore(t)
	chat := newChat(t, st, "console:starve")
	ctx, cancel := context.WithCancel(context.Background())
	var turns atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				// Writes of their own, so the three never conflict.
				err := st.RecordJob(ctx, models.JobRecord{Kind: "turn", Key: fmt.Sprintf("w%d-%d", w, i), Outcome: "written"})
				if err != nil && ctx.Err() == nil {
					t.Errorf("turn write: %v", err)
					return
				}
				turns.Add(1)
			}
		})
	}
	for turns.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	jobDone := make(chan error, 1)
	go func() {
		jobDone <- st.RecordJob(models.Background(ctx), models.JobRecord{Kind: "compact", Key: chat.ID, Outcome: "written"})
	}()
	select {
	case err := <-jobDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a job's write never got the writer while turns kept writing")
	}
}

// The checkpointer copies what commits leave in the WAL into the database
// file while the store is open, before SQLite's own checkpoint (at 1000
// pages) would.
func TestSQLiteCheckpointerCopiesTheWAL(t *testing.T) {
	st, path := sqliteStore(t)
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	chat := newChat(t, st, "console:checkpoint")
	head := chat.HeadID
	text := strings.Repeat("the tide comes in over the causeway ", 100)
	for i := range 300 {
		m := &models.Message{Role: "user", Content: fmt.Sprintf("%d %s", i, text)}
		if err := st.Append(context.Background(), chat.ID, head, head, []*models.Message{m}); err != nil {
			t.Fatal(err)
		}
		head = m.ID
	}
	deadline := time.Now().Add(20 * time.Second)
	for size() < before+800_000 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes (%d before about 1 MB of messages): the WAL was not copied into it", size(), before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A commit does not copy the WAL into the database file (and sync both)
// while the writer is held: the checkpointer does, on its own connection.
// Only past WALBackstopFrames, a WAL the checkpointer did not keep short,
// do commits copy it themselves. With SQLite's default (1000 frames)
// every commit past 4 MB of WAL did.
func TestSQLiteCommitsLeaveTheWALToTheCheckpointer(t *testing.T) {
	st, _ := sqliteStore(t)
	chat := newChat(t, st, "console:backstop")
	models.StopCheckpointer(st)
	head := chat.HeadID
	text := strings.Repeat("the lamp is trimmed before the squall ", 200)
	write := func(i int) (length, backlog int) {
		t.Helper()
		m := &models.Message{Role: "user", Content: fmt.Sprintf("%d %s", i, text)}
		if err := st.Append(context.Background(), chat.ID, head, head, []*models.Message{m}); err != nil {
			t.Fatal(err)
		}
		head = m.ID
		length, backlog, ok := models.WALFrames(st)
		if !ok {
			t.Fatal("the WAL-index file could not be read")
		}
		return length, backlog
	}
	i := 0
	for length, backlog := write(i); length < models.WALBackstopFrames-100; length, backlog = write(i) {
		if backlog != length {
			t.Fatalf("a commit copied the WAL at %d frames (backlog %d): want no copy below %d", length, backlog, models.WALBackstopFrames)
		}
		i++
	}
	for range 200 {
		i++
		if length, backlog := write(i); backlog < length {
			return // the backstop copied it
		}
	}
	length, backlog, _ := models.WALFrames(st)
	t.Errorf("past the backstop the WAL holds %d frames, %d not copied: commits never copied it", length, backlog)
}

// Each checkpointer tick copies in PASSIVE mode; a WAL grown past
// WALRestartFrames is started over with RESTART, which holds off writers
// while it copies, so whatever backlog there is is copied first without.
func TestCheckpointerCopiesBeforeItRestarts(t *testing.T) {
	r := models.WALRestartFrames
	for _, c := range []struct {
		length, backlog int
		ok              bool
		want            string
	}{
		{10, 300, true, "PASSIVE"},
		{r, 500, true, "PASSIVE RESTART"},
		{r + 10, 0, true, "RESTART"},
		{0, 0, false, "PASSIVE"},
	} {
		if got := strings.Join(models.CheckpointModes(c.length, c.backlog, c.ok), " "); got != c.want {
			t.Errorf("WAL of %d frames, %d not copied: modes %q, want %q", c.length, c.backlog, got, c.want)
		}
	}
	if short, long := models.RestartWait(r), models.RestartWait(2*r); short >= long {
		t.Errorf("RESTART waits %v at %d frames and %v at %d: a WAL grown twice as long should wait longer", short, r, long, 2*r)
	}
}

// Under steady writes, with reads running all the while, the WAL is
// started over again and again: it stays well short of what is written.
// (A checkpointer that copied in PASSIVE mode alone, with SQLite's own
// checkpoint off, never found the WAL fully copied, and it grew with every
// write.)
func TestSQLiteWALStaysBoundedUnderSteadyWrites(t *testing.T) {
	st, path := sqliteStore(t)
	chat := newChat(t, st, "console:wal")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := st.Chat(ctx, chat.ID); err != nil && ctx.Err() == nil {
					t.Errorf("read: %v", err)
					return
				}
			}
		})
	}
	head := chat.HeadID
	text := strings.Repeat("the tide comes in over the causeway ", 500)
	var written int64
	maxWAL := int64(0)
	for i := 0; written < 64<<20; i++ {
		m := &models.Message{Role: "user", Content: fmt.Sprintf("%d %s", i, text)}
		if err := st.Append(context.Background(), chat.ID, head, head, []*models.Message{m}); err != nil {
			t.Fatal(err)
		}
		head = m.ID
		written += int64(len(m.Content))
		if fi, err := os.Stat(path + "-wal"); err == nil {
			maxWAL = max(maxWAL, fi.Size())
		}
	}
	cancel()
	wg.Wait()
	t.Logf("WAL at most %d bytes while %d bytes of messages were written", maxWAL, written)
	// The checkpointer starts it over from 8 MB (WALRestartFrames), and
	// commits copy it from 16 MB (WALBackstopFrames). Under -race, with
	// three copies of this test at once, it reached 14.6–24.8 MB before a
	// restart got through; one never started over would hold all 64 MB.
	if maxWAL > 32<<20 {
		t.Errorf("the WAL grew to %d bytes while %d bytes were written: it was not started over", maxWAL, written)
	}
}

// The checkpointer reads the WAL's backlog from SQLite's WAL-index file:
// a checkpoint clears it and writes add to it.
func TestSQLiteWALBacklogReadsTheWALIndex(t *testing.T) {
	st, _ := sqliteStore(t)
	chat := newChat(t, st, "console:backlog")
	checkpoint := func() {
		t.Helper()
		var busy, frames, copied int
		// The store's own checkpointer may be running one at the same
		// moment: SQLite then refuses this one (-1 frames). Try again.
		for try := 0; try == 0 || frames == -1 && try < 100; try++ {
			if try > 0 {
				time.Sleep(10 * time.Millisecond)
			}
			if err := st.DB().Raw("PRAGMA wal_checkpoint(PASSIVE)").Row().Scan(&busy, &frames, &copied); err != nil {
				t.Fatal(err)
			}
		}
		_, n, ok := models.WALFrames(st)
		if !ok {
			t.Fatal("the WAL-index file could not be read")
		}
		if busy != 0 || n != 0 || copied != frames {
			t.Errorf("after a checkpoint (busy %d, %d of %d frames copied) the backlog reads %d, want 0", busy, copied, frames, n)
		}
	}
	checkpoint()
	for i := range 5 {
		appendBeat(t, st, chat.ID, i)
	}
	if _, n, _ := models.WALFrames(st); n == 0 || n >= 200 {
		t.Errorf("backlog %d after five beats: want some frames, fewer than the checkpointer's 200", n)
	}
	checkpoint()
}
