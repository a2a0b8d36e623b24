package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"troupe/llm/openaitest"
	"troupe/memory/memorytest"
	"troupe/models"
)

// checkReflectionWhole checks that a character's reflection is all or
// nothing: no belief and no perception marked as reflected on, or the
// belief with its evidence, every perception it shows marked and folded.
func checkReflectionWhole(t *testing.T, st *models.Store, perceptions int64) (done bool) {
	t.Helper()
	var beliefs, evidence, seen, folded int64
	st.DB().Model(&models.Belief{}).Count(&beliefs)
	st.DB().Model(&models.BeliefEvidence{}).Count(&evidence)
	st.DB().Model(&models.ReflectionSeen{}).Count(&seen)
	st.DB().Model(&models.Perception{}).Where("folded_into IS NOT NULL").Count(&folded)
	switch {
	case beliefs == 0 && evidence == 0 && seen == 0 && folded == 0:
		return false
	case beliefs == 1 && perceptions > 0 && evidence == perceptions && seen == perceptions && folded == perceptions:
		return true
	}
	t.Fatalf("a half-written reflection: %d beliefs, %d links, %d seen, %d folded of %d perceptions", beliefs, evidence, seen, folded, perceptions)
	return false
}

// TestWorkerKilledMidReflection kills the worker (SIGKILL) while the scribe
// answers the reflection request, or just after it answered: the
// reflection is installed whole or not at all, and a restarted worker's
// sweeper runs it.
func TestWorkerKilledMidReflection(t *testing.T) {
	bin := troupeBinary(t)
	for round := 0; round < crashRounds(); round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			dsn := "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")
			seedRecordableChat(t, dsn, 8)
			fake := openaitest.NewServer(t)
			called := make(chan struct{}, 1)
			var mu sync.Mutex
			hang := true
			reflecting := memorytest.Reflecting(&memorytest.Scribe{})
			fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				if !memorytest.IsReflection(req) {
					return reflecting(req)
				}
				mu.Lock()
				defer mu.Unlock()
				if hang {
					select {
					case called <- struct{}{}:
					default:
					}
					if round%2 == 0 {
						return openaitest.Answer{Fault: openaitest.FaultHang}
					}
				}
				return reflecting(req)
			})
			envs := []string{"TROUPE_DATABASE_DSN=" + dsn, "TROUPE_MODEL_BASE_URL=" + fake.URL(), "TROUPE_LOG_LEVEL=error",
				"TROUPE_CARDS_DIR=" + t.TempDir(), "TROUPE_OPS_LISTEN=", "TROUPE_RECORDER_BATCH=3", "TROUPE_REFLECTION_EVERY_TURNS=5"}
			w := startWorker(t, bin, envs)
			select {
			case <-called:
			case <-time.After(30 * time.Second):
				_ = w.Process.Kill()
				t.Fatal("the worker never asked the scribe to reflect")
			}
			time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
			_ = w.Process.Signal(syscall.SIGKILL)
			_ = w.Wait()
			st, err := models.Open(context.Background(), dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var perceptions int64
			st.DB().Model(&models.Perception{}).Count(&perceptions)
			checkReflectionWhole(t, st, perceptions)
			mu.Lock()
			hang = false
			mu.Unlock()
			w = startWorker(t, bin, envs)
			defer func() {
				_ = w.Process.Signal(syscall.SIGTERM)
				_ = w.Wait()
			}()
			deadline := time.Now().Add(40 * time.Second)
			for !checkReflectionWhole(t, st, perceptions) {
				if time.Now().After(deadline) {
					t.Fatal("after restart the reflection is not installed")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
