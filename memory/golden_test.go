package memory

import (
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/golden"
	"troupe/prompt"
)

// checkGolden compares got with testdata/NAME.golden (see package golden).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
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
