package prompt_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/prompt"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/NAME.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// render shows a message list the way a person reads it.
func render(msgs []prompt.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("===== " + m.Role + " =====\n")
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}
