package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
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

// scribeCrash is one round of a kill -9 test of a memory job: the worker is
// killed while the scribe answers the job's request (the answer hangs in
// even rounds; in odd ones it comes at once and the kill lands around
// validation and install), the store must hold the job whole or not at all,
// and a restarted worker's sweeper must finish the work.
type scribeCrash struct {
	// dsn is the store, seeded with the owed work.
	dsn string
	// envs are the worker's settings beyond the store, model and logs.
	envs []string
	// what names the job in failure messages.
	what string
	// target reports the request the worker is killed in.
	target func(req openaitest.Request) bool
	// respond answers every request, the target once it is let through.
	respond func(req openaitest.Request) openaitest.Answer
	// whole fails the test on a half-written job and reports whether the
	// work is done; it runs while no worker writes.
	whole func(t *testing.T, st *models.Store) bool
	// done, when set, is what the restarted worker is waited on for
	// instead of whole (whose reads would race its writes).
	done func(st *models.Store) bool
}

// killMidScribe runs round of c with the troupe binary bin.
func killMidScribe(t *testing.T, bin string, round int, c scribeCrash) {
	t.Helper()
	fake := openaitest.NewServer(t)
	called := make(chan struct{}, 1)
	var hang atomic.Bool
	hang.Store(true)
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		if hang.Load() && c.target(req) {
			select {
			case called <- struct{}{}:
			default:
			}
			if round%2 == 0 {
				return openaitest.Answer{Fault: openaitest.FaultHang}
			}
		}
		return c.respond(req)
	})
	envs := append([]string{"TROUPE_DATABASE_DSN=" + c.dsn, "TROUPE_MODEL_BASE_URL=" + fake.URL(), "TROUPE_LOG_LEVEL=error",
		"TROUPE_CARDS_DIR=" + t.TempDir(), "TROUPE_OPS_LISTEN="}, c.envs...)
	w := startWorker(t, bin, envs)
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		_ = w.Process.Kill()
		t.Fatalf("the worker never asked the scribe for the %s", c.what)
	}
	// Not a synchronization: the kill lands at a random point of the
	// answer's handling.
	time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
	_ = w.Process.Signal(syscall.SIGKILL)
	_ = w.Wait()
	st, err := models.Open(context.Background(), c.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c.whole(t, st)
	hang.Store(false)
	w = startWorker(t, bin, envs)
	defer func() {
		_ = w.Process.Signal(syscall.SIGTERM)
		_ = w.Wait()
	}()
	done := c.done
	if done == nil {
		done = func(st *models.Store) bool { return c.whole(t, st) }
	}
	deadline := time.Now().Add(40 * time.Second)
	for !done(st) {
		if time.Now().After(deadline) {
			t.Fatalf("after restart the %s is not done", c.what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.done != nil && !c.whole(t, st) {
		t.Fatalf("after restart the %s is done, then not", c.what)
	}
}

// sqliteDSN is a fresh SQLite store's DSN.
func sqliteDSN(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "troupe.db") }

// TestWorkerKilledMidCompaction kills the worker with SIGKILL while the
// scribe is writing (and, in odd rounds, right after it answered): no
// partial summary is ever installed and the restarted worker's sweeper
// finishes the owed compaction.
func TestWorkerKilledMidCompaction(t *testing.T) {
	bin := troupeBinary(t)
	for round := 0; round < crashRounds(); round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			t.Parallel() // each round has its own store, fake model and worker
			dsn := sqliteDSN(t)
			chatID := seedOwedChat(t, dsn, 40)
			killMidScribe(t, bin, round, scribeCrash{dsn: dsn, what: "compaction",
				target:  func(openaitest.Request) bool { return true },
				respond: (&memorytest.Scribe{}).Respond,
				whole: func(t *testing.T, st *models.Store) bool {
					ctx := context.Background()
					sums, _ := st.ChatSummaries(ctx, chatID)
					for _, s := range sums {
						if _, err := memory.ValidateSummary("en", s.Content); err != nil {
							t.Fatalf("an invalid summary was installed: %v", err)
						}
					}
					chat, _ := st.Chat(ctx, chatID)
					owed, _ := memory.NewService(st, nil, memory.Config{Compact: memory.CompactParams{Keep: 6, Period: 30, MinCutChars: 2000}}, nil).CompactionOwed(ctx, chat)
					if len(sums) > 1 {
						t.Fatalf("got %d summaries, want exactly 1", len(sums))
					}
					return len(sums) == 1 && !owed
				}})
		})
	}
}

// snapshot runs reads in one transaction that sees one state of the store
// (REPEATABLE READ on PostgreSQL, whose default gives each statement its
// own), so counts polled while a restarted worker installs cannot straddle
// its commit. An error fails the test rather than reading as zero.
func snapshot(t *testing.T, st *models.Store, reads func(tx *gorm.DB) error) {
	t.Helper()
	if err := st.DB().Transaction(reads, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}); err != nil {
		t.Fatalf("reading the store: %v", err)
	}
}
