package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"troupe/adapters/openai/openaitest"
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
