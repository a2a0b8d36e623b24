package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretNeverPrintsAnyVerb(t *testing.T) {
	t.Parallel()
	s := Secret("hunter2-secret")
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "key", s)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "key", s)
	js, _ := json.Marshal(struct{ K Secret }{s})
	outs := []string{
		fmt.Sprintf("%d %t %c %v %s %q %x %+v %#v", s, s, s, s, s, s, s, s, s),
		buf.String(), string(js),
	}
	for _, out := range outs {
		if strings.Contains(out, "hunter2") {
			t.Errorf("secret leaked: %s", out)
		}
	}
}

func TestFileErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, key string }{
		{"memory:\n  keep: lots\n", "memory.keep"},
		{"memory:\n  kep: 3\n", "memory.kep"},
		{"scribe:\n  timeout: soon\n", "scribe.timeout"},
		{"discord:\n  allowed_guilds: 5\n", "discord.allowed_guilds"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			path := t.TempDir() + "/troupe.yaml"
			if err := writeFile(path, tt.yaml); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, func(string) (string, bool) { return "", false })
			cerr, ok := err.(*Error)
			if !ok || cerr.Key != tt.key {
				t.Errorf("got %v, want an *Error for key %s", err, tt.key)
			}
		})
	}
}
