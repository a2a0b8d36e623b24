package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"troupe/models/testenv"

	"troupe/fakes/openaitest"
	"troupe/models"
)

func TestInvalidConfigExitsTwoNamingTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		key  string
	}{
		{"bad number", map[string]string{"TROUPE_MEMORY_KEEP": "lots"}, []string{"chat", "--card", "x.json"}, "memory.keep"},
		{"bad dsn", map[string]string{"TROUPE_DATABASE_DSN": "mysql://x"}, []string{"serve"}, "database.dsn"},
		{"bad language", map[string]string{"TROUPE_LANGUAGE": "fr"}, []string{"worker"}, "language"},
		{"missing config file", nil, []string{"--config", "/nonexistent/troupe.yaml", "migrate"}, "--config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := map[string]string{"TROUPE_CARDS_DIR": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			if _, ok := env["TROUPE_DATABASE_DSN"]; !ok {
				env["TROUPE_DATABASE_DSN"] = "sqlite://" + filepath.Join(dir, "t.db")
			}
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(""), &out, &errOut, testEnv(env))
			code := exitCode(err, &errOut)
			if code != 2 || !strings.Contains(errOut.String(), tt.key) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, errOut.String(), tt.key)
			}
			if matches, _ := filepath.Glob(filepath.Join(dir, "t.db*")); len(matches) > 0 {
				t.Errorf("a database was created before the config was checked")
			}
		})
	}
}

func TestFailedTurnKeepsTheMessage(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	// Every attempt of the first turn fails; the /regen after it works.
	fake.Script(openaitest.Answer{Fault: openaitest.Fault500}, openaitest.Answer{Fault: openaitest.Fault500}, openaitest.Answer{Fault: openaitest.Fault500})
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	env := testEnv(map[string]string{"TROUPE_DATABASE_DSN": dsn, "TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_CARDS_DIR": t.TempDir(),
		"TROUPE_LOG_LEVEL": "error", "TROUPE_MODEL_MAX_RETRIES": "2"})
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--no-worker"},
		strings.NewReader("A message the model failed on.\n/regen\n"), &out, &errOut, env)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "Your message is saved: send /regen") {
		t.Errorf("no short error with a way to retry:\n%s", got)
	}
	if !strings.Contains(got, `You said "A message the model failed on."`) {
		t.Errorf("/regen did not answer the kept message:\n%s", got)
	}
	st, _ := models.Open(context.Background(), dsn, nil)
	defer st.Close()
	var n int64
	st.DB().Model(&models.Message{}).Where("content = ?", "A message the model failed on.").Count(&n)
	if n != 1 {
		t.Errorf("the user's message is stored %d times, want once", n)
	}
}

// TestShutdownInterruptsReplyKeepsMessage stops troupe while a reply is
// being written: the user is told, the message is kept, nothing hangs.
func TestShutdownInterruptsReplyKeepsMessage(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	fake.Script(openaitest.Answer{Text: "A reply that takes its time.", Latency: 5 * time.Second})
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	env := testEnv(map[string]string{"TROUPE_DATABASE_DSN": dsn, "TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_CARDS_DIR": t.TempDir(), "TROUPE_LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var out testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--no-worker"}, pr, &out, io.Discard, env)
	}()
	fmt.Fprintln(pw, "Tell me a long story.")
	for fake.Count() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	pw.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("chat did not stop")
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("the user was not told the reply was interrupted:\n%s", out.String())
	}
	st, _ := models.Open(context.Background(), dsn, nil)
	defer st.Close()
	var n int64
	st.DB().Model(&models.Message{}).Where("content = ?", "Tell me a long story.").Count(&n)
	if n != 1 {
		t.Errorf("the interrupted message is stored %d times, want once", n)
	}
}
