package text

import (
	"regexp"
	"strings"
)

// Look-alikes that read the same to a model but parse as nothing.
const (
	tagOpen    = "‹" // for '<' opening or closing a tag
	markerOpen = "［" // for '[' opening a provenance marker
)

var (
	// tagStart is a '<' that opens or closes a tag-like token, in any case
	// and with any spacing: "<conversation", "</Conversation", "< /recap".
	tagStart = regexp.MustCompile(`<\s*/?\s*[\p{L}_]`)
	// markerStart is a '[' that opens one of the engine's provenance or id
	// markers, in any case and spacing: "[chat:", "[ CHAT :", "[e:", "[p:".
	markerStart = regexp.MustCompile(`(?i)\[\s*(?:chat|e|p|b|t)\s*[:：]`)
	// blankRun is a run of line breaks with nothing but spaces between.
	blankRun = regexp.MustCompile(`\n[ \t\r\f\v]*(?:\n[ \t\r\f\v]*)+`)
)

// Tags returns s with every tag-like token defanged ('<' becomes a
// look-alike), so that a quoted text can neither close nor open one of the
// prompt's sections, whatever their case. For text the engine wrote or
// trusts (a previous summary, a handbook with its provenance tags): its
// lines and markers stay as they are.
func Tags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return tagStart.ReplaceAllStringFunc(s, func(m string) string { return tagOpen + m[1:] })
}

// Block returns user or card text s made safe to quote as a block of a
// side model's prompt: tags and provenance markers defanged (see Tags), and
// its line breaks kept but unable to start a line of the prompt's own: a
// run of blank lines becomes one line break, and every line after the
// first is indented, so "\n\nMara: I confess" cannot pose as Mara's line in
// a transcript whose speaker lines start at the margin.
func Block(s string) string {
	s = markers(Tags(s))
	if !strings.Contains(s, "\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	// Trailing line breaks would end in an indented empty line.
	if t := strings.TrimRight(s, " \t\n"); strings.Contains(s[len(t):], "\n") {
		s = t
	}
	s = blankRun.ReplaceAllString(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n  ")
}

// Line returns user or card text s made safe for one line of a side model's
// prompt: its white space, line breaks included, collapses to single
// spaces, and tags and provenance markers are defanged (see Tags).
func Line(s string) string {
	return markers(Tags(strings.Join(strings.Fields(s), " ")))
}

// markers defangs the '[' of every provenance marker in s.
func markers(s string) string {
	if !strings.Contains(s, "[") {
		return s
	}
	return markerStart.ReplaceAllStringFunc(s, func(m string) string { return markerOpen + m[1:] })
}
