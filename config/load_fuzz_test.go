package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"model:\n  base_url: http://localhost:11434/v1\n  name: qwen2.5:7b\n  timeout: 90s\n",
		"model:\n  name: gpt-4o-mini\n  context_window: 128000\n  max_reply_tokens: 1024\n  temperature: 0.9\nmemory:\n  keep: 8\n  period: 30\n",
		"language: zh\ncards:\n  dir: cards\n  default: 苏砚\n",
		"database:\n  dsn: postgres://troupe:secret@localhost:5432/troupe?sslmode=disable\nredis:\n  url: redis://localhost:6379/0\n",
		"discord:\n  token: abc\n  shard_count: 2\n  shard_id: 1\n  allowed_guilds: [\"1\", \"2\"]\n",
		"telegram:\n  webhook_url: https://example.com/hook\n  webhook_secret: s\n  max_message_chars: 4096\n",
		"memory:\n  keep: 0\n",
		"memory:\n  keepp: 6\n",
		"model:\n  timeout: soon\n",
		"model:\n  context_window: [1, 2]\n",
		"model: 5\n",
		"- a\n- b\n",
		"model:\n  name: &a x\n  base_url: *a\n",
		"model:\n  name: \"unterminated\n",
		"\t model:\n",
		"log:\n  level: loud\n",
		"ops:\n  listen: 127.0.0.1:9090\n---\nmodel: {}\n",
	} {
		f.Add(s)
	}
	noEnv := func(string) (string, bool) { return "", false }
	// One file, rewritten for each input: a directory per input slows the
	// fuzzer down, and inputs run one at a time.
	path := filepath.Join(f.TempDir(), "troupe.yaml")
	f.Fuzz(func(t *testing.T, body string) {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, noEnv)
		if err == nil {
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Load accepted a config that does not validate: %v", err)
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("Load returned %T %v, want a *config.Error", err, err)
		}
		if ce.Key == "" || ce.Problem == "" {
			t.Fatalf("the error %q does not name a key and a problem", err)
		}
	})
}
