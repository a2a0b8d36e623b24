package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// redisServer runs a private redis-server that the test can stop and start.
type redisServer struct {
	port int
	cmd  *exec.Cmd
	dir  string
}

func (r *redisServer) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", r.port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
}

func (r *redisServer) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

// TestRedisOutageDuringConversation stops Redis in the middle of a console
// conversation: every turn is still answered, and once Redis is back the
// sweeper catches up on the memory work owed during the outage.
func TestRedisOutageDuringConversation(t *testing.T) {
	testenv.Require(t)
	outage := 3 * time.Second
	if os.Getenv("TROUPE_SLOW_TESTS") != "" {
		outage = 30 * time.Second
	}
	_, portText, _ := net.SplitHostPort(freeAddr(t))
	port, _ := strconv.Atoi(portText)
	rs := &redisServer{port: port, dir: t.TempDir()}
	rs.start(t)
	defer rs.stop()

	fake := openaitest.NewServer(t)
	fake.SetResponder((&memorytest.Scribe{}).Respond)
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	env := testEnv(map[string]string{
		"TROUPE_DATABASE_DSN": dsn, "TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_CARDS_DIR": t.TempDir(), "TROUPE_LOG_LEVEL": "error",
		"TROUPE_REDIS_URL": fmt.Sprintf("redis://127.0.0.1:%d/0", port), "TROUPE_MEMORY_SWEEP_INTERVAL": "1s",
		"TROUPE_MEMORY_KEEP": "2", "TROUPE_MEMORY_PERIOD": "2", "TROUPE_MEMORY_MIN_CUT_CHARS": "200",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var out testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "30s"}, pr, &out, io.Discard, env)
	}()
	say := func(i int) {
		t.Helper()
		fmt.Fprintf(pw, "Line %d: the storm goes on and I keep the lamp lit all night long.\n", i)
		want := fmt.Sprintf(`You said "Line %d:`, i)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("line %d was not answered:\n%s", i, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i := 0; i < 3; i++ {
		say(i)
	}
	rs.stop()
	start := time.Now()
	for i := 3; time.Since(start) < outage; i++ {
		say(i)
		// Pacing, not synchronization: spread the turns over the outage.
		time.Sleep(200 * time.Millisecond)
	}
	rs.start(t)
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chats, _ := st.ChannelChats(context.Background(), "console:Ada/lantern-keeper")
	deadline := time.Now().Add(60 * time.Second)
	for {
		sums, _ := st.ChatSummaries(context.Background(), chats[0].ID)
		chat, _ := st.Chat(context.Background(), chats[0].ID)
		br, _ := st.LoadBranch(context.Background(), chat.HeadID)
		if len(sums) > 0 && len(br.Uncovered) <= 2*4+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory did not catch up after Redis came back: %d summaries, %d uncovered", len(sums), len(br.Uncovered))
		}
		time.Sleep(200 * time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("chat: %v", err)
	}
}

// TestPostgresRestartDuringConversation stops and restarts PostgreSQL in the
// middle of a console conversation: while it is down the user gets a short
// error and nothing crashes; once it is back the conversation goes on by
// itself.
func TestPostgresRestartDuringConversation(t *testing.T) {
	testenv.Require(t)
	pg := testenv.StartPrivatePostgres(t)
	fake := openaitest.NewServer(t)
	env := testEnv(map[string]string{
		"TROUPE_DATABASE_DSN": pg.URL(), "TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_CARDS_DIR": t.TempDir(), "TROUPE_LOG_LEVEL": "error",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var out testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--no-worker"}, pr, &out, io.Discard, env)
	}()
	waitOut := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %q:\n%s", want, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fmt.Fprintln(pw, "Before the restart.")
	waitOut(`You said "Before the restart."`)
	pg.Stop(t)
	fmt.Fprintln(pw, "While the database is down.")
	waitOut("can't reach its database")
	pg.Start(t)
	fmt.Fprintln(pw, "After the restart.")
	waitOut(`You said "After the restart."`)
	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("chat: %v", err)
	}
}
