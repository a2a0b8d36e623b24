package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"troupe/llm/openaitest"
	"troupe/memory"
	"troupe/memory/memorytest"
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
				dsn := "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")
				chatID := seedOwedChat(t, dsn, 8)
				makeIdle(t, dsn, chatID)
				fake := openaitest.NewServer(t)
				called := make(chan struct{}, 1)
				var mu sync.Mutex
				hang := true
				scribe := &memorytest.Scribe{}
				scribe.Break = func(k string, _ int) (openaitest.Answer, bool) {
					mu.Lock()
					defer mu.Unlock()
					if k != kind || !hang {
						return openaitest.Answer{}, false
					}
					select {
					case called <- struct{}{}:
					default:
					}
					if round%2 == 0 {
						return openaitest.Answer{Fault: openaitest.FaultHang}, true
					}
					return openaitest.Answer{}, false
				}
				fake.SetResponder(scribe.Respond)
				envs := []string{"TROUPE_DATABASE_DSN=" + dsn, "TROUPE_MODEL_BASE_URL=" + fake.URL(), "TROUPE_LOG_LEVEL=error", "TROUPE_CARDS_DIR=" + t.TempDir(), "TROUPE_OPS_LISTEN="}
				w := startWorker(t, bin, envs)
				select {
				case <-called:
				case <-time.After(30 * time.Second):
					_ = w.Process.Kill()
					t.Fatalf("the worker never asked the scribe for a %s", kind)
				}
				time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
				_ = w.Process.Signal(syscall.SIGKILL)
				_ = w.Wait()
				st, err := models.Open(context.Background(), dsn, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				checkInstalledValid(t, st, chatID)
				mu.Lock()
				hang = false
				mu.Unlock()
				w = startWorker(t, bin, envs)
				defer func() {
					_ = w.Process.Signal(syscall.SIGTERM)
					_ = w.Wait()
				}()
				deadline := time.Now().Add(40 * time.Second)
				for {
					mem, _ := st.LoadMemory(context.Background(), "maren", "console:local:ada")
					if len(mem.Entries) == 1 && mem.Entries[0].MergedHash != "" && mem.Entries[0].MergedHash == mem.Entries[0].RecapHash {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("after restart the memory is not consolidated: %+v", mem.Entries)
					}
					time.Sleep(100 * time.Millisecond)
				}
				checkInstalledValid(t, st, chatID)
			})
		}
	}
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
	if mem.Handbook != "" && !memory.Blocks(mem.Handbook)[chatID] {
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
			dsn := "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")
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
			st.DB().Model(&models.Message{}).Where("chat_id = ?", chatID).Count(&msgs)
			st.DB().Model(&models.Chat{}).Where("id = ?", chatID).Count(&chats)
			st.DB().Model(&models.Tombstone{}).Where("chat_id = ?", chatID).Count(&tombs)
			whole := msgs == 3001 && chats == 1 && tombs == 0
			gone := msgs == 0 && chats == 0 && tombs == 1
			if !whole && !gone {
				t.Fatalf("half a forget: %d messages, %d chats, %d tombstones", msgs, chats, tombs)
			}
			t.Logf("killed %s", map[bool]string{true: "before commit", false: "after commit"}[whole])
		})
	}
}
