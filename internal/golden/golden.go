// Package golden compares what a test produced with a file kept under the
// test's testdata, and rewrites the file instead when the tests run with
// -update (go test ./pkg/ -update). Only tests import it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with the file at path, or writes got there under
// -update.
func Check(t testing.TB, path, got string) {
	t.Helper()
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
		t.Fatalf("read golden file (go test -update writes it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from its golden file:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
