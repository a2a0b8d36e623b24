package main

import (
	"context"
	"fmt"
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

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// troupeBinary builds the troupe command once per test run.
func troupeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "troupe-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "troupe")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// seedOwedChat stores a chat of beats that owes a compaction.
func seedOwedChat(t *testing.T, dsn string, beats int) string {
	t.Helper()
	ctx := context.Background()
	st, err := models.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
	_, err = st.EnsureChannel(ctx, models.Channel{ID: "console:ada/maren", Platform: "console", ExternalID: "ada/maren", SpaceID: "console:local:ada"})
	must(err)
	must(st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Language: "en", Data: "{}"}))
	chat, err := st.StartChat(ctx, "console:ada/maren", "maren", "console:local:ada", "crash", &models.Message{Role: "assistant", AuthorName: "Maren", Content: "Hello."})
	must(err)
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("Beat %d: I ask about the lamp, the storm, the boat and the brother.", i)}
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("Answer %d: *She trims the wick.* \"Later,\" she says, and watches the sea.", i)}
		must(st.Append(ctx, chat.ID, head, head, []*models.Message{u, a}))
		head = a.ID
	}
	return chat.ID
}

func startWorker(t *testing.T, bin string, envs []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "worker")
	cmd.Env = append(os.Environ(), envs...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestWorkerKilledMidCompaction kills the worker with SIGKILL while the
// scribe is writing (and, in later rounds, right after it answered): no
// partial summary is ever installed and the restarted worker's sweeper
// finishes the owed compaction.
func TestWorkerKilledMidCompaction(t *testing.T) {
	bin := troupeBinary(t)
	for round := 0; round < crashRounds(); round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			dsn := "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")
			chatID := seedOwedChat(t, dsn, 40)
			fake := openaitest.NewServer(t)
			called := make(chan struct{}, 1)
			hang := true
			var mu sync.Mutex
			scribe := &memorytest.Scribe{}
			scribe.Break = func(string, int) (openaitest.Answer, bool) {
				mu.Lock()
				defer mu.Unlock()
				select {
				case called <- struct{}{}:
				default:
				}
				if hang {
					if round%2 == 0 {
						return openaitest.Answer{Fault: openaitest.FaultHang}, true
					}
					// Answer at once: the kill lands a few milliseconds
					// later, around validation and install.
					return openaitest.Answer{}, false
				}
				return openaitest.Answer{}, false
			}
			fake.SetResponder(scribe.Respond)
			envs := []string{"TROUPE_DATABASE_DSN=" + dsn, "TROUPE_MODEL_BASE_URL=" + fake.URL(), "TROUPE_LOG_LEVEL=error", "TROUPE_CARDS_DIR=" + t.TempDir()}
			w := startWorker(t, bin, envs)
			select {
			case <-called:
			case <-time.After(30 * time.Second):
				w.Process.Kill()
				t.Fatal("the worker never called the scribe")
			}
			time.Sleep(time.Duration(round%4) * 3 * time.Millisecond)
			if err := w.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = w.Wait()
			ctx := context.Background()
			st, err := models.Open(ctx, dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			sums, _ := st.ChatSummaries(ctx, chatID)
			for _, s := range sums {
				if _, err := memory.ValidateSummary("en", s.Content); err != nil {
					t.Fatalf("an invalid summary was installed: %v", err)
				}
			}
			mu.Lock()
			hang = false
			mu.Unlock()
			w = startWorker(t, bin, envs)
			defer func() {
				_ = w.Process.Signal(syscall.SIGTERM)
				_ = w.Wait()
			}()
			deadline := time.Now().Add(30 * time.Second)
			for {
				sums, _ = st.ChatSummaries(ctx, chatID)
				chat, _ := st.Chat(ctx, chatID)
				owed, _ := memory.NewService(st, nil, memory.Config{Compact: memory.CompactParams{Keep: 6, Period: 30, MinCutChars: 2000}}, nil).CompactionOwed(ctx, chat)
				if len(sums) >= 1 && !owed {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after restart: %d summaries, owed %v", len(sums), owed)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(sums) != 1 {
				t.Errorf("got %d summaries, want exactly 1", len(sums))
			}
		})
	}
}
