package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models"
)

// crashRounds is how many kills each fault test injects: 20 with
// TROUPE_SLOW_TESTS (scripts/test sets it in CI), a few otherwise.
func crashRounds() int {
	if os.Getenv("TROUPE_SLOW_TESTS") != "" {
		return 20
	}
	return 3
}

// makeIdle backdates a chat so that its recap is owed.
func makeIdle(t *testing.T, dsn, chatID string) {
	t.Helper()
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.DB().Model(&models.Chat{}).Where("id = ?", chatID).Update("active_at", time.Now().Add(-2*time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
}

// TestWorkerKilledMidRecapAndConsolidation kills the worker (SIGKILL) while
// the scribe writes a recap, and while it writes a consolidation: nothing
// partial is installed, whatever is installed validates, and a restarted
// worker's sweeper finishes both.
func TestWorkerKilledMidRecapAndConsolidation(t *testing.T) {
	bin := troupeBinary(t)
	for _, kind := range []string{"recap", "consolidate"} {
		for round := 0; round < crashRounds(); round++ {
			t.Run(fmt.Sprintf("%s/round%d", kind, round), func(t *testing.T) {
				t.Parallel() // each round has its own store, fake model and worker
				dsn := sqliteDSN(t)
				chatID := seedOwedChat(t, dsn, 8)
				makeIdle(t, dsn, chatID)
				killMidScribe(t, bin, round, scribeCrash{dsn: dsn, what: kind,
					target:  func(req openaitest.Request) bool { return memorytest.Kind(req) == kind },
					respond: (&memorytest.Scribe{}).Respond,
					whole: func(t *testing.T, st *models.Store) bool {
						checkInstalledValid(t, st, chatID)
						return consolidated(st)
					},
					done: consolidated})
			})
		}
	}
}

// consolidated reports whether the chat's recap is merged into the card's
// memory in its space.
func consolidated(st *models.Store) bool {
	mem, _ := st.LoadMemory(context.Background(), "maren", "console:local:ada")
	return len(mem.Entries) == 1 && mem.Entries[0].MergedHash != "" && mem.Entries[0].MergedHash == mem.Entries[0].RecapHash
}

// checkInstalledValid checks that every memory row present validates.
func checkInstalledValid(t *testing.T, st *models.Store, chatID string) {
	t.Helper()
	ctx := context.Background()
	if r, err := st.Recap(ctx, chatID); err == nil {
		if _, err := memory.ValidateRecap("en", r.Content); err != nil || r.Hash != memory.Hash(r.Content) {
			t.Fatalf("an invalid recap is installed: %v", err)
		}
	}
	mem, _ := st.LoadMemory(ctx, "maren", "console:local:ada")
	if (mem.Handbook == "") != (mem.Resident == "") {
		t.Fatalf("a half-installed consolidation: handbook %d bytes, resident %d bytes", len(mem.Handbook), len(mem.Resident))
	}
	if mem.Handbook != "" && !handbook.Blocks(mem.Handbook)[chatID] {
		t.Fatalf("the installed handbook lacks the chat's block")
	}
}

// TestForgetKilledMidPurge kills `troupe memory forget` at random points of
// a large chat's purge: the chat is either all there (no tombstone) or all
// gone (tombstone, no message, no recap), never half.
func TestForgetKilledMidPurge(t *testing.T) {
	bin := troupeBinary(t)
	for round := 0; round < crashRounds(); round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			t.Parallel() // each round has its own store and process
			dsn := sqliteDSN(t)
			chatID := seedOwedChat(t, dsn, 1500)
			cmd := exec.Command(bin, "memory", "forget", "--chat", chatID, "--yes")
			cmd.Env = append(os.Environ(), "TROUPE_DATABASE_DSN="+dsn, "TROUPE_LOG_LEVEL=error", "TROUPE_OPS_LISTEN=")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rand.IntN(120)) * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			st, err := models.Open(context.Background(), dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var msgs, chats, tombs int64
			snapshot(t, st, func(tx *gorm.DB) error {
				return errors.Join(
					tx.Model(&models.Message{}).Where("chat_id = ?", chatID).Count(&msgs).Error,
					tx.Model(&models.Chat{}).Where("id = ?", chatID).Count(&chats).Error,
					tx.Model(&models.Tombstone{}).Where("chat_id = ?", chatID).Count(&tombs).Error)
			})
			whole := msgs == 3001 && chats == 1 && tombs == 0
			gone := msgs == 0 && chats == 0 && tombs == 1
			if !whole && !gone {
				t.Fatalf("half a forget: %d messages, %d chats, %d tombstones", msgs, chats, tombs)
			}
			t.Logf("killed %s", map[bool]string{true: "before commit", false: "after commit"}[whole])
		})
	}
}
