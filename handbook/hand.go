package handbook

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// HandLineHash identifies a line by its text without surrounding space. The
// store keeps, with each handbook and resident, the hashes of the lines a
// person wrote (see HandEdits).
func HandLineHash(line string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(line)))
	return hex.EncodeToString(sum[:16])
}

// HandLineSet parses a stored set of hand-line hashes, one per line.
func HandLineSet(stored string) map[string]bool {
	set := map[string]bool{}
	for _, h := range strings.Split(stored, "\n") {
		if h != "" {
			set[h] = true
		}
	}
	return set
}
