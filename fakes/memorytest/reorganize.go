package memorytest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"troupe/fakes/openaitest"
	"troupe/memory"
)

// IsReorganize reports whether a request is a reorganize prompt.
func IsReorganize(req openaitest.Request) bool {
	return len(req.Messages) > 0 && memory.IsReorganizePrompt(req.Messages[0].Content)
}

var pairRe = regexp.MustCompile(`(?m)^\[(\d+)\]\nA: (.*)\nB: (.*)$`)

// Reorganize answers a reorganize prompt as a careful scribe would: a pair
// states the same fact when the two entries name the same things that
// carry a number (a fact's mark, a count, a day) and share most of their
// words; anything else is two facts.
func Reorganize(req openaitest.Request) string {
	var same []string
	for _, m := range pairRe.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
		a, b := marks(m[2]), marks(m[3])
		if len(a) > 0 && slices.Equal(a, b) {
			same = append(same, m[1])
		}
	}
	return fmt.Sprintf(`{"same": [%s]}`, strings.Join(same, ", "))
}

// marks returns the words of s that hold a digit, lower-cased and sorted.
func marks(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
