//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// consoleProc is a `troupe chat` process on a terminal the test types at.
type consoleProc struct {
	cmd  *exec.Cmd
	in   io.Writer
	out  *testenv.Buffer
	done chan struct{}
}

func startConsole(t *testing.T, bin string, env []string, card string) *consoleProc {
	t.Helper()
	controller, terminal := openPTY(t)
	p := &consoleProc{in: controller, out: &testenv.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "chat", "--card", card, "--user", "ada", "--no-worker")
	p.cmd.Dir = t.TempDir()
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = terminal, p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	terminal.Close()
	// What the terminal echoes is read and dropped, so it never fills.
	go func() { _, _ = io.Copy(io.Discard, controller) }()
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- chat output ---\n%s", p.out.String())
		}
	})
	return p
}

func (p *consoleProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *consoleProc) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleLineKeptThroughLockWait: `troupe chat` is killed (SIGKILL)
// while it writes a reply, leaving the channel's lock in Redis for a few
// seconds. The console started next, on a terminal, waits for that lock
// before its session opens; a line typed meanwhile must be stored as it is
// read, so that it survives this second process being killed 2 s later,
// still waiting.
func TestConsoleLineKeptThroughLockWait(t *testing.T) {
	testenv.Require(t)
	bin := troupeBinary(t)
	dsn, redisURL := testenv.FreshPostgresDB(t), testenv.FreshRedisURL(t)
	model := openaitest.NewServer(t)
	model.SetRecording(false)
	var asked atomic.Int32
	model.SetResponder(func(req openaitest.Request) openaitest.Answer {
		asked.Add(1)
		a := openaitest.DefaultResponder(req)
		a.Fault = openaitest.FaultHang
		return a
	})
	env := []string{"TROUPE_DATABASE_DSN=" + dsn, "TROUPE_REDIS_URL=" + redisURL, "TROUPE_MODEL_BASE_URL=" + model.URL(),
		"TROUPE_MODEL_MAX_RETRIES=0", "TROUPE_CARDS_DIR=" + t.TempDir(), "TROUPE_LOG_LEVEL=warn", "TROUPE_OPS_LISTEN=", "TROUPE_LIMITS_RATE_PER_MINUTE=0"}
	card, err := filepath.Abs("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}

	p1 := startConsole(t, bin, env, card)
	p1.typeLine(t, "First: the lamp went dark.")
	for deadline := time.Now().Add(30 * time.Second); asked.Load() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the model was never asked")
		}
	}
	p1.kill()
	rdb := redis.NewClient(mustParseRedisURL(t, redisURL))
	defer rdb.Close()
	ctx := context.Background()
	locks, err := rdb.Keys(ctx, "troupe:lock:channel:console:*").Result()
	if err != nil || len(locks) != 1 {
		t.Fatalf("the killed console left locks %q (%v), want its channel's; the test proves nothing", locks, err)
	}
	holder, err := rdb.Get(ctx, locks[0]).Result()
	if err != nil {
		t.Fatal(err)
	}

	p2 := startConsole(t, bin, env, card)
	const typed = "Second: I relight it."
	p2.typeLine(t, typed)
	time.Sleep(2 * time.Second) // the interval under test, not a wait for a condition
	if now, _ := rdb.Get(ctx, locks[0]).Result(); now != holder {
		t.Fatalf("the dead console's lock was gone before the second was killed; the test proves nothing")
	}
	p2.kill()

	st, err := models.Connect(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var inbox, stored int64
	if err := st.DB().Raw("SELECT count(*) FROM inbox_messages WHERE content = ?", typed).Scan(&inbox).Error; err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Raw("SELECT count(*) FROM messages WHERE content = ?", typed).Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if inbox+stored != 1 {
		t.Errorf("the line typed during the lock wait is stored %d times (inbox %d, chat %d), want once", inbox+stored, inbox, stored)
	}
}
