package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// turnCrashRig runs `troupe serve` processes one after another on one
// PostgreSQL database and one redis-server, receiving a Telegram DM by
// webhook (the test posts each update as Telegram would, and an update is
// accepted once the webhook answers 200), against a fake model the test
// can make hang.
type turnCrashRig struct {
	t     *testing.T
	bin   string
	dsn   string
	redis string
	tg    *telegramtest.Server
	model *openaitest.Server
	// hang makes the model hold every request until the process dies.
	hang  atomic.Bool
	asked atomic.Int32
	hook  string
	env   []string
	st    *models.Store
	procs int
}

const (
	crashSecret = "crash-secret"
	crashUser   = 42
)

var crashAda = telegramtest.User{ID: crashUser, FirstName: "Ada"}

func newTurnCrashRig(t *testing.T) *turnCrashRig {
	t.Helper()
	// A lock must outlive the killed process: the real PostgreSQL and
	// redis-server that scripts/test starts.
	testenv.Require(t)
	r := &turnCrashRig{t: t, bin: troupeBinary(t), dsn: testenv.FreshPostgresDB(t), redis: testenv.FreshRedisURL(t), tg: telegramtest.NewServer(t), model: openaitest.NewServer(t)}
	r.model.SetRecording(false)
	r.model.SetResponder(func(req openaitest.Request) openaitest.Answer {
		r.asked.Add(1)
		a := openaitest.DefaultResponder(req)
		a.ChunkSize = 1 << 16
		// A kill can land while the model writes.
		a.Latency = 20 * time.Millisecond
		if r.hang.Load() {
			a.Fault = openaitest.FaultHang
		}
		return a
	})
	cards := t.TempDir()
	card, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), card, 0o644); err != nil {
		t.Fatal(err)
	}
	r.hook = freeAddr(t)
	r.env = []string{
		"TROUPE_DATABASE_DSN=" + r.dsn,
		"TROUPE_REDIS_URL=" + r.redis,
		"TROUPE_MODEL_BASE_URL=" + r.model.URL(),
		"TROUPE_MODEL_MAX_RETRIES=0",
		"TROUPE_CARDS_DIR=" + cards,
		"TROUPE_LOG_LEVEL=warn",
		"TROUPE_LIMITS_RATE_PER_MINUTE=0",
		"TROUPE_TELEGRAM_TOKEN=" + r.tg.Token(),
		"TROUPE_TELEGRAM_API_ENDPOINT=" + r.tg.Endpoint(),
		"TROUPE_TELEGRAM_WEBHOOK_URL=https://bot.example/tg/hook",
		"TROUPE_TELEGRAM_WEBHOOK_LISTEN=" + r.hook,
		"TROUPE_TELEGRAM_WEBHOOK_SECRET=" + crashSecret,
	}
	if r.st, err = models.Open(context.Background(), r.dsn, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.st.Close() })
	return r
}

// start runs a serve process and waits until its webhook takes updates.
func (r *turnCrashRig) start() *scaleProc {
	r.t.Helper()
	r.procs++
	p := &scaleProc{name: fmt.Sprint("serve", r.procs), ops: freeAddr(r.t), hook: r.hook, out: &testenv.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(r.bin, "serve")
	p.cmd.Dir = r.t.TempDir()
	p.cmd.Env = append(p.cmd.Environ(), append(append([]string{}, r.env...), "TROUPE_OPS_LISTEN="+p.ops)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		r.t.Fatalf("start %s: %v", p.name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	r.t.Cleanup(func() {
		p.kill()
		if r.t.Failed() {
			r.t.Logf("--- %s output ---\n%s", p.name, p.out.String())
		}
	})
	p.waitReady(r.t, 30*time.Second)
	return p
}

// killNine ends p with SIGKILL, as a crash would.
func killNine(p *scaleProc) {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// send posts a DM to the webhook of the running process; it returns once
// the webhook acknowledged it, that is, once troupe accepted it.
func (r *turnCrashRig) send(text string) {
	r.t.Helper()
	id, _ := r.tg.SendText(crashAda, text)
	client := &http.Client{Timeout: 30 * time.Second}
	if err := postWebhook(client, "http://"+r.hook+"/tg/hook", crashSecret, r.tg.RawUpdate(id)); err != nil {
		r.t.Fatalf("post %q: %v", text, err)
	}
}

// waitAsked waits until the model has been asked n times in all.
func (r *turnCrashRig) waitAsked(n int32) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.asked.Load() < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("the model was asked %d times, want %d", r.asked.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// userLines returns the DM's current chat: its user messages on the branch
// in order, and whether the branch ends on a reply.
func (r *turnCrashRig) userLines() (users []string, answered bool) {
	ctx := context.Background()
	ch, err := r.st.Channel(ctx, fmt.Sprintf("telegram:%d", crashUser))
	if err != nil || ch.CurrentChatID == "" {
		return nil, false
	}
	chat, err := r.st.Chat(ctx, ch.CurrentChatID)
	if err != nil {
		return nil, false
	}
	br, err := r.st.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		return nil, false
	}
	for _, m := range br.Uncovered {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	return users, len(br.Uncovered) > 0 && br.Uncovered[len(br.Uncovered)-1].Role == "assistant"
}

// waitAllAnswered waits until the chat holds exactly want as its user
// messages, in order, and ends on a reply; it returns how long that took.
func (r *turnCrashRig) waitAllAnswered(want []string, within time.Duration) time.Duration {
	r.t.Helper()
	start := time.Now()
	for {
		users, answered := r.userLines()
		if answered && strings.Join(users, "\n") == strings.Join(want, "\n") {
			return time.Since(start)
		}
		if time.Since(start) > within {
			r.t.Fatalf("after %v: user messages %q (answered %v), want %q answered", within, users, answered, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeKilledHoldingTheChannelLock kills `troupe serve` (SIGKILL) while
// it writes a reply, so holding the DM's channel lock in Redis: a process
// started right after answers the DM within seconds, not after the old
// 30 s lock. Then that process is killed too, 10 s after it accepted a
// message it could not answer yet (the model hangs): the message is kept
// and the next process answers it.
func TestServeKilledHoldingTheChannelLock(t *testing.T) {
	r := newTurnCrashRig(t)
	r.hang.Store(true)
	p1 := r.start()
	r.send("First: the lamp went dark.")
	r.waitAsked(1)
	killNine(p1)
	rdb := redis.NewClient(mustParseRedisURL(t, r.redis))
	defer rdb.Close()
	if n, _ := rdb.Exists(context.Background(), fmt.Sprintf("troupe:lock:channel:telegram:%d", crashUser)).Result(); n != 1 {
		t.Fatalf("the killed process left no channel lock behind; the test proves nothing")
	}

	// A second process, with a model that answers.
	r.hang.Store(false)
	killed := time.Now()
	p2 := r.start()
	took := r.waitAllAnswered([]string{"First: the lamp went dark."}, 25*time.Second)
	// The lock's TTL (5 s) and one turn, counted from when the restarted
	// process was ready: before, the lock alone held it for 30 s.
	if took > 12*time.Second {
		t.Errorf("the DM was answered %v after the restarted process was ready (%v after the kill), want within seconds", took, time.Since(killed))
	}
	t.Logf("answered %v after the restarted process was ready, %v after the kill", took, time.Since(killed))

	// The second process is in a reply that hangs, holding the lock, when
	// a new message arrives; 10 s later it is killed.
	r.hang.Store(true)
	asked := r.asked.Load()
	r.send("Second: I relight it.")
	r.waitAsked(asked + 1)
	r.send("Third: and I wait for the boat.")
	time.Sleep(10 * time.Second) // the interval under test, not a wait for a condition
	killNine(p2)

	r.hang.Store(false)
	r.start()
	r.waitAllAnswered([]string{"First: the lamp went dark.", "Second: I relight it.", "Third: and I wait for the boat."}, 25*time.Second)
	var replies int
	for _, m := range r.tg.Messages(crashUser) {
		if strings.Contains(m.Text, "You said") {
			replies++
		}
	}
	if replies < 2 {
		t.Errorf("%d replies reached Telegram, want at least 2", replies)
	}
}

// TestServeKillNineRounds kills `troupe serve` with SIGKILL at random
// moments of a conversation and restarts it at once, round after round
// (20 rounds with TROUPE_SLOW_TESTS, a few otherwise): every message the
// webhook acknowledged is stored exactly once, in order, and answered.
func TestServeKillNineRounds(t *testing.T) {
	r := newTurnCrashRig(t)
	var sent []string
	var asked int32
	p := r.start()
	for round := 0; round < crashRounds(); round++ {
		for i := 0; i < 2; i++ {
			line := fmt.Sprintf("Round %d line %d: the storm, the lamp and the boat.", round, i)
			r.send(line)
			sent = append(sent, line)
		}
		// Kill while the turn waits for the dead process's lock or is
		// stored, or, every other round, once the model was asked: during
		// the reply or as it is stored and delivered.
		if round%2 == 1 {
			r.waitAsked(asked + 1)
			time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		} else {
			time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		}
		asked = r.asked.Load()
		killNine(p)
		p = r.start()
	}
	r.waitAllAnswered(sent, 60*time.Second)
	var left int64
	r.st.DB().Model(&models.InboxMessage{}).Count(&left)
	if left != 0 {
		t.Errorf("%d accepted messages still wait in the inbox", left)
	}
}

func mustParseRedisURL(t *testing.T, u string) *redis.Options {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
