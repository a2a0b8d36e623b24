package text

import "strings"

// CollapseBlankLines returns s with every run of blank lines made one blank
// line and the white space around it trimmed: what is left of a text after
// lines were taken out of it.
func CollapseBlankLines(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}
