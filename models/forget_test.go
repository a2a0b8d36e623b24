package models_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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
}

var raceInstalls = []raceInstall{
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
}

func factRecap(chat models.Chat, fact string) models.Recap {
	return models.Recap{ChatID: chat.ID, CardID: chat.CardID, SpaceID: chat.SpaceID, ChatName: chat.Name,
		Content: "## Facts\n- " + fact, Hash: "hash-" + chat.ID, Fingerprint: "fp-" + chat.ID}
}

// purgeChat drops the lines tagged with the chat, as memory.Forget does for
// lines only it supports.
func purgeChat(chatID string) models.Purge {
	drop := func(text string) string {
		var keep []string
		for _, l := range strings.Split(text, "\n") {
			if !strings.Contains(l, "[chat:"+chatID+"]") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return func(hb, rs string) (string, string) { return drop(hb), drop(rs) }
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
		_, err := st.ForgetChat(ctx, chat.ID, purgeChat(chat.ID))
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
		sqlDB, err := st.DB().DB()
		if err != nil {
			t.Fatal(err)
		}
		return sqlDB.Stats().WaitCount
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
}
