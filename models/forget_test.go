package models_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/belief"
	"troupe/models"
	"troupe/models/testenv"
)

// raceInstall is a memory write that may race a forget of its chat.
type raceInstall struct {
	// point is where the store pauses it (see models.SetPause).
	point string
	// prepare sets the chat up and returns the write, which puts fact
	// into the store.
	prepare func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error
	// afterForget is the error the write must end with when the forget
	// went first.
	afterForget error
	// forgetFirstOnly: the write has no pause point, so only a forget can
	// go first.
	forgetFirstOnly bool
}

var raceInstalls = []raceInstall{
	// A turn's append is one statement on PostgreSQL: it waits for the
	// forget's lock on the chat row, then finds no chat, so no message
	// outlives the forget.
	{point: "append", afterForget: models.ErrNotFound, forgetFirstOnly: true,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			return func(ctx context.Context) error {
				return st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{{Role: "user", Content: fact}})
			}
		}},
	{point: "install summary", afterForget: models.ErrChatGone,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			_, reply := appendBeat(t, st, chat.ID, 1)
			return func(ctx context.Context) error {
				_, err := st.InstallSummary(ctx, chat.ID, "", reply.ID, fact, 1)
				return err
			}
		}},
	{point: "install recap", afterForget: models.ErrChatGone,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			appendBeat(t, st, chat.ID, 1)
			return func(ctx context.Context) error {
				return st.InstallRecap(ctx, factRecap(chat, fact))
			}
		}},
	{point: "install consolidation", afterForget: models.ErrStale,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			ctx := context.Background()
			r := factRecap(chat, fact)
			if err := st.InstallRecap(ctx, r); err != nil {
				t.Fatal(err)
			}
			cur, err := st.LoadMemory(ctx, chat.CardID, chat.SpaceID)
			if err != nil {
				t.Fatal(err)
			}
			line := "- " + fact + " [chat:" + chat.ID + "]"
			return func(ctx context.Context) error {
				return st.InstallConsolidation(ctx, models.Consolidation{CardID: chat.CardID, SpaceID: chat.SpaceID,
					Version: cur.Version(), Handbook: cur.Handbook + "\n" + line, Resident: cur.Resident + "\n" + line,
					Merged: map[string]string{chat.ID: r.Hash}})
			}
		}},
	// A reflection that read only a belief's links to its own
	// perceptions rewrites the belief, which also cites the forgotten
	// chat: the forget must see the rewrite (its text and index terms) and
	// delete it, or delete the belief first, and the rewrite then finds it
	// gone. The character is not the forgotten chat's card (a player's
	// reflection, card ""), so the (card, space) lock does not keep the
	// two apart: the lock of the space's beliefs does.
	{point: "install reflection", afterForget: models.ErrStale,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			ctx := context.Background()
			other := newChat(t, st, "console:reflect-other:"+chat.ID)
			for _, c := range []models.Chat{chat, other} {
				line := "The gate was open in " + c.ID + "."
				appendRecorded(t, st, c, line, "ok", []models.PlainEvent{{Kind: "line", Text: line}}, nil)
				appendRecorded(t, st, c, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
				recordAll(t, st, c, "", map[int]map[string]string{0: {"Maren": line}})
			}
			gate := perceptionID(t, st, "Maren", "The gate was open in "+chat.ID+".")
			fresh := perceptionID(t, st, "Maren", "The gate was open in "+other.ID+".")
			b := belief.Belief{ID: models.NewID(), Text: "The gate stands open.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
				Evidence: []belief.Evidence{{Perception: gate, Turn: 1, Stance: belief.Supports}}}
			r := models.ReflectionInstall{ChatID: other.ID, SpaceID: other.SpaceID, Character: "Maren"}
			r.Changes.Created = []belief.Belief{b}
			if err := st.InstallReflection(ctx, r); err != nil {
				t.Fatal(err)
			}
			read, err := st.BeliefLinksTo(ctx, []string{b.ID}, []string{fresh})
			if err != nil {
				t.Fatal(err)
			}
			b.Text, b.ChangedTurn = fact, 2
			b.Evidence = []belief.Evidence{{Perception: fresh, Turn: 2, Stance: belief.Supports}}
			r = models.ReflectionInstall{ChatID: other.ID, SpaceID: other.SpaceID, Character: "Maren",
				Seen: []string{fresh}, Read: read, Partial: true}
			r.Changes.Updated = []belief.Belief{b}
			return func(ctx context.Context) error { return st.InstallReflection(ctx, r) }
		}},
	{point: "delete recap", afterForget: models.ErrNotFound,
		prepare: func(t *testing.T, st *models.Store, chat models.Chat, fact string) func(context.Context) error {
			if err := st.InstallRecap(context.Background(), factRecap(chat, fact)); err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
				_, err := st.DeleteRecap(ctx, chat.ID, "")
				return err
			}
		}},
}

func factRecap(chat models.Chat, fact string) models.Recap {
	return models.Recap{ChatID: chat.ID, CardID: chat.CardID, SpaceID: chat.SpaceID, ChatName: chat.Name,
		Content: "## Facts\n- " + fact, Hash: "hash-" + chat.ID, Fingerprint: "fp-" + chat.ID}
}

// TestForgetRacesInstalls slows each install of a summary, recap or
// consolidation inside its transaction and runs a forget of its chat
// meanwhile, and the other way round: whichever starts first, the other
// waits for it, and nothing of the forgotten chat remains (issue 11, defect
// 4: an orphan recap or summary survived, and the next consolidation put its
// fact back).
func TestForgetRacesInstalls(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			st := testenv.OpenStore(t, b)
			for _, in := range raceInstalls {
				for _, installFirst := range []bool{true, false} {
					if installFirst && in.forgetFirstOnly {
						continue
					}
					name := in.point + "/forget first"
					if installFirst {
						name = in.point + "/install first"
					}
					t.Run(name, func(t *testing.T) {
						chat := newChat(t, st, "console:race:"+strings.ReplaceAll(name, " ", "-"))
						fact := "the brass key lies under the third stone " + chat.ID
						install := in.prepare(t, st, chat, fact)
						err := raceForget(t, st, chat, in.point, install, installFirst)
						switch {
						case installFirst && err != nil:
							t.Errorf("install that went first: %v", err)
						case !installFirst && !errors.Is(err, in.afterForget):
							t.Errorf("install after the forget: err = %v, want %v", err, in.afterForget)
						}
						assertForgotten(t, st, chat, fact)
					})
				}
			}
		})
	}
}

// raceForget pauses the first of install and forget inside its
// transaction, starts the other, waits until that one is blocked (or done),
// lets the first go on, and returns the install's error.
func raceForget(t *testing.T, st *models.Store, chat models.Chat, point string, install func(context.Context) error, installFirst bool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := "forget"
	if installFirst {
		first = point
	}
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	models.SetPause(st, func(p string) {
		if p == first {
			once.Do(func() { close(reached); <-release })
		}
	})
	defer models.SetPause(st, nil)

	installErr, forgetErr := make(chan error, 1), make(chan error, 1)
	runInstall := func() { installErr <- install(ctx) }
	runForget := func() {
		_, err := st.ForgetChat(ctx, chat.ID)
		forgetErr <- err
	}
	second, secondErr := runForget, forgetErr
	if installFirst {
		go runInstall()
	} else {
		go runForget()
		second, secondErr = runInstall, installErr
	}
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatalf("%s never reached its pause", first)
	}
	waits := lockWaits(t, st)
	go second()
	// The second must be held up by the first's locks; on a store without
	// them it runs to its end at once, and leaves behind what
	// assertForgotten finds.
	var secondDone error
	done := false
	for !done && lockWaits(t, st) == waits {
		select {
		case secondDone = <-secondErr:
			done = true
		case <-ctx.Done():
			t.Fatal("the second write neither finished nor waited for a lock")
		case <-time.After(5 * time.Millisecond):
		}
	}
	close(release)
	if done {
		t.Errorf("the second write ran to its end while the first held its locks")
	} else {
		secondDone = <-secondErr
	}
	var iErr, fErr error
	if installFirst {
		iErr, fErr = <-installErr, secondDone
	} else {
		iErr, fErr = secondDone, <-forgetErr
	}
	if fErr != nil {
		t.Fatalf("forget: %v", fErr)
	}
	return iErr
}

// lockWaits counts waits for a lock in st: on PostgreSQL the sessions of
// its database waiting for a lock now, on SQLite (one connection) every
// wait for the connection so far. It must not query SQLite, whose one
// connection a paused transaction holds.
func lockWaits(t *testing.T, st *models.Store) int64 {
	t.Helper()
	if st.Dialect() == "sqlite" {
		return models.WriterWaits(st)
	}
	var n int64
	if err := st.DB().Raw(`SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// assertForgotten checks that nothing of chat remains: no chat, messages,
// summaries or recap, no manifest entry awaiting a merge, and fact neither
// in the handbook nor in the resident summary.
func assertForgotten(t *testing.T, st *models.Store, chat models.Chat, fact string) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Chat(ctx, chat.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("chat after forget: err = %v, want ErrNotFound", err)
	}
	if _, err := st.Tombstone(ctx, chat.ID); err != nil {
		t.Errorf("tombstone: %v", err)
	}
	var msgs int64
	if err := st.DB().Model(&models.Message{}).Where("chat_id = ?", chat.ID).Count(&msgs).Error; err != nil || msgs != 0 {
		t.Errorf("%d messages of the forgotten chat remain (%v)", msgs, err)
	}
	if sums, err := st.ChatSummaries(ctx, chat.ID); err != nil || len(sums) != 0 {
		t.Errorf("%d summaries of the forgotten chat remain (%v)", len(sums), err)
	}
	if r, err := st.Recap(ctx, chat.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a recap of the forgotten chat remains: %q (err %v)", r.Content, err)
	}
	mem, err := st.LoadMemory(ctx, chat.CardID, chat.SpaceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range mem.Entries {
		if e.ChatID == chat.ID && e.RecapHash != "" {
			t.Errorf("the manifest still offers the forgotten chat's recap %s for a merge", e.RecapHash)
		}
	}
	if strings.Contains(mem.Handbook, fact) || strings.Contains(mem.Resident, fact) {
		t.Errorf("the forgotten fact is back:\nhandbook %q\nresident %q", mem.Handbook, mem.Resident)
	}
	var beliefs, orphans int64
	if err := st.DB().Model(&models.Belief{}).Where("text = ?", fact).Count(&beliefs).Error; err != nil || beliefs != 0 {
		t.Errorf("%d beliefs say the forgotten fact (%v)", beliefs, err)
	}
	if err := st.DB().Raw(`SELECT (SELECT count(*) FROM belief_evidence WHERE belief_id NOT IN (SELECT id FROM beliefs)) +
		(SELECT count(*) FROM recall_terms WHERE kind = 'b' AND item_id NOT IN (SELECT id FROM beliefs))`).Scan(&orphans).Error; err != nil || orphans != 0 {
		t.Errorf("%d links or index terms of deleted beliefs remain (%v)", orphans, err)
	}
}

// TestForgetClearsJobRecords: the job records of a forgotten chat go, and
// the reasons recorded for its card and space's jobs, which may quote its
// text, are cleared; other spaces' records stay as they were.
func TestForgetClearsJobRecords(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:jobs")
		quote := `the line "the brass key lies under the third stone" names no chat`
		spaceKey := models.MemoryJobKey(chat.CardID, chat.SpaceID)
		otherKey := models.MemoryJobKey(chat.CardID, "console:local:bo")
		for _, r := range []models.JobRecord{
			{Kind: "compact", Key: chat.ID, Outcome: "failed", Reason: quote},
			{Kind: "recap", Key: chat.ID, Outcome: "written", Reason: "recap 1234", Product: "recap:" + chat.ID},
			{Kind: "consolidate", Key: spaceKey, Outcome: "failed", Reason: quote},
			{Kind: "consolidate", Key: otherKey, Outcome: "failed", Reason: quote},
		} {
			if err := st.RecordJob(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"compact", "recap"} {
			if r, err := st.Job(ctx, kind, chat.ID); !errors.Is(err, models.ErrNotFound) {
				t.Errorf("%s record of the forgotten chat remains: %+v (err %v)", kind, r, err)
			}
		}
		r, err := st.Job(ctx, "consolidate", spaceKey)
		if err != nil {
			t.Fatal(err)
		}
		if r.Reason != models.ReasonCleared || r.Outcome != "failed" || r.Failures != 1 {
			t.Errorf("the space's record after forget = %+v; want reason %q, still failed once", r, models.ReasonCleared)
		}
		if r, err := st.Job(ctx, "consolidate", otherKey); err != nil || r.Reason != quote {
			t.Errorf("another space's record = %+v (err %v); want it untouched", r, err)
		}
	})
}

// TestForgetLeavesNoTextInTheSQLiteFile writes a unique fact everywhere a
// chat's text goes, forgets the chat, and reads the raw database and WAL
// files, with the store open and after it is closed: the fact must be in
// neither (issue 11, defect 5: deleted pages kept it).
func TestForgetLeavesNoTextInTheSQLiteFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "troupe.db")
	st, err := models.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chat := newChat(t, st, "console:secure")
	fact := "Quillon-" + chat.ID + " hid the ledger of the drowned bell"
	tagged := "- " + fact + " [chat:" + chat.ID + "]"
	// Enough turns that the chat's text fills pages of its own, and
	// earlier versions of pages sit in the WAL.
	for i := 0; i < 40; i++ {
		appendBeat(t, st, chat.ID, i)
	}
	cur, err := st.Chat(ctx, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	user := &models.Message{Role: "user", Content: "Remember this: " + fact + strings.Repeat(" and the tide came in", 300)}
	if err := st.Append(ctx, chat.ID, cur.HeadID, cur.HeadID, []*models.Message{user}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.InstallSummary(ctx, chat.ID, "", user.ID, "## Story so far\n"+fact, 41); err != nil {
		t.Fatal(err)
	}
	if err := st.InstallRecap(ctx, factRecap(chat, fact)); err != nil {
		t.Fatal(err)
	}
	for _, row := range []any{
		&models.Ledger{ChatID: chat.ID, Snapshot: `{"flags":{"secret":"` + fact + `"}}`},
		&models.MemoryChunk{ID: models.NewID(), ChatID: chat.ID, ThroughID: user.ID, Content: fact},
	} {
		if err := st.DB().Create(row).Error; err != nil {
			t.Fatal(err)
		}
	}
	// The handbook's first version goes to history when the second replaces it.
	for _, hb := range []string{"## Shared\n" + tagged, "## Shared\n" + tagged + "\n- The bell rang twice. [chat:other]"} {
		if err := st.EditMemory(ctx, chat.CardID, chat.SpaceID, &hb, &tagged, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RecordJob(ctx, models.JobRecord{Kind: "consolidate", Key: models.MemoryJobKey(chat.CardID, chat.SpaceID),
		Outcome: "failed", Reason: "rejected: " + fact}); err != nil {
		t.Fatal(err)
	}
	if n := countInFiles(t, path, fact); n == 0 {
		t.Fatal("the fact is not in the files before the forget: the test checks nothing")
	}
	if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
		t.Fatal(err)
	}
	mem, err := st.LoadMemory(ctx, chat.CardID, chat.SpaceID)
	if err != nil || !strings.Contains(mem.Handbook, "The bell rang twice.") {
		t.Fatalf("the other chat's entry went too: %q (%v)", mem.Handbook, err)
	}
	if n := countInFiles(t, path, fact); n != 0 {
		t.Errorf("after forget, with the store open: the fact is found %d times in the raw files", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countInFiles(t, path, fact); n != 0 {
		t.Errorf("after forget and close: the fact is found %d times in the raw files", n)
	}
}

// countInFiles counts text in the database file and its WAL and rollback
// journal, where they exist.
func countInFiles(t *testing.T, path, text string) int {
	t.Helper()
	n := 0
	for _, f := range []string{path, path + "-wal", path + "-journal"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if c := bytes.Count(b, []byte(text)); c > 0 {
			t.Logf("%s: %d copies", filepath.Base(f), c)
			n += c
		}
	}
	return n
}

// TestSQLiteWritesHoldTheWriteLock: on SQLite the store takes no locks of
// its own because every transaction begins IMMEDIATE, holding the
// database's write lock from before its first read. So while a memory write
// or a forget is inside its transaction, another connection to the file
// (another troupe process, such as `troupe memory forget` next to `troupe
// serve`) cannot begin a write, and no check can go stale before its write.
func TestSQLiteWritesHoldTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "troupe.db")
	st, err := models.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	probe, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probe.SetMaxOpenConns(1)
	tryWrite := func() error {
		if _, err := probe.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		_, err := probe.ExecContext(ctx, "ROLLBACK")
		return err
	}
	chat := newChat(t, st, "console:sqlite-lock")
	appendBeat(t, st, chat.ID, 1)
	for _, w := range []struct {
		point string
		run   func() error
	}{
		{"install recap", func() error { return st.InstallRecap(ctx, factRecap(chat, "a fact")) }},
		{"forget", func() error { _, err := st.ForgetChat(ctx, chat.ID); return err }},
	} {
		paused := false
		models.SetPause(st, func(p string) {
			if p != w.point {
				return
			}
			paused = true
			if err := tryWrite(); err == nil || !strings.Contains(err.Error(), "locked") {
				t.Errorf("%s: another connection began a write inside the transaction (err %v)", w.point, err)
			}
		})
		if err := w.run(); err != nil {
			t.Fatalf("%s: %v", w.point, err)
		}
		models.SetPause(st, nil)
		if !paused {
			t.Fatalf("%s never reached its pause", w.point)
		}
		// The store's own background writes may hold the lock for a
		// moment; a lock left held would hold it for good.
		err := tryWrite()
		for wait := time.Now().Add(2 * time.Second); err != nil && time.Now().Before(wait); err = tryWrite() {
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("after %s: the other connection cannot write at all: %v", w.point, err)
		}
	}
}
