package record

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"troupe/text"
)

// Kind is what an event records.
type Kind string

// Event kinds. Plain events are actions and lines; the recorder adds changes.
const (
	Action Kind = "action"
	Line   Kind = "line"
	Change Kind = "change"
)

// Plain is one plain event of a message: its kind and its verbatim text.
type Plain struct {
	Kind Kind
	Text string
}

// Limits on plain events, so that one huge message cannot flood the record.
const (
	// MaxPlainEvents is the most events one message makes; the text after
	// the last one joins it.
	MaxPlainEvents = 64
	// MaxEventRunes bounds one event's text.
	MaxEventRunes = 2000
)

// quotePairs maps each opening quote mark to its closing one. Straight
// double quotes open and close themselves; apostrophes are never quotes.
var quotePairs = map[rune]rune{
	'"': '"',
	'“': '”',
	'「': '」',
	'『': '』',
	'«': '»',
}

// PlainEvents splits a message into its plain events, in order: quoted
// speech is a line; narration and *actions* are actions, one per paragraph
// and per *…* span. Out-of-character text — ((…)) spans and lines that start
// with "OOC:" — makes no events. A message with nothing in character makes
// none.
func PlainEvents(text string) []Plain {
	text = stripOOC(text)
	var out []Plain
	for _, para := range paragraphs(text) {
		out = appendParagraph(out, para)
	}
	return capEvents(out)
}

// stripOOC removes ((…)) spans (an unclosed one runs to the end) and lines
// that start with OOC: or (OOC.
func stripOOC(text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "((")
		if i < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:i])
		j := strings.Index(text[i+2:], "))")
		if j < 0 {
			break
		}
		text = text[i+2+j+2:]
	}
	lines := strings.Split(b.String(), "\n")
	kept := lines[:0]
	for _, l := range lines {
		t := strings.ToUpper(strings.TrimSpace(l))
		if strings.HasPrefix(t, "OOC:") || strings.HasPrefix(t, "OOC：") || strings.HasPrefix(t, "(OOC") || strings.HasPrefix(t, "（OOC") {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// paragraphs splits text at line breaks; a quotation that spans lines stays
// in one paragraph.
func paragraphs(text string) []string {
	var out []string
	start := 0
	var closing rune
	for i, r := range text {
		switch {
		case closing != 0:
			if r == closing {
				closing = 0
			}
		case quotePairs[r] != 0:
			closing = quotePairs[r]
		case r == '\n':
			out = append(out, text[start:i])
			start = i + 1
		}
	}
	return append(out, text[start:])
}

// appendParagraph adds one paragraph's events: quotes become lines, the
// narration between them actions (a *…* span is an action of its own).
func appendParagraph(out []Plain, para string) []Plain {
	narration := func(s string) {
		for _, a := range actionSpans(s) {
			if inCharacter(a) {
				out = append(out, Plain{Kind: Action, Text: a})
			}
		}
	}
	rest := para
	for {
		i, open := nextQuote(rest)
		if i < 0 {
			narration(rest)
			return out
		}
		narration(rest[:i])
		body := rest[i+utf8.RuneLen(open):]
		closing := quotePairs[open]
		j := strings.IndexRune(body, closing)
		end := len(body)
		if j >= 0 {
			end = j + utf8.RuneLen(closing)
		}
		quote := string(open) + body[:end]
		if inCharacter(strings.Trim(quote, string(open)+string(closing))) {
			out = append(out, Plain{Kind: Line, Text: quote})
		}
		if j < 0 {
			return out
		}
		rest = body[end:]
	}
}

// nextQuote finds the first opening quote mark in s.
func nextQuote(s string) (int, rune) {
	for i, r := range s {
		if quotePairs[r] != 0 {
			return i, r
		}
	}
	return -1, 0
}

// actionSpans splits narration into *…* spans and the text around them.
func actionSpans(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '*')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '*')
		if j < 0 {
			break
		}
		out = append(out, strings.TrimSpace(s[:i]), s[i:i+1+j+1])
		s = s[i+1+j+1:]
	}
	out = append(out, strings.TrimSpace(s))
	return out
}

// inCharacter reports whether s holds anything but punctuation and space.
func inCharacter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// capEvents bounds the number of events and the length of each. An event
// whose letters all lay past the cut (a run of symbols, then a word) is
// left out, as one without letters is.
func capEvents(evs []Plain) []Plain {
	if len(evs) > MaxPlainEvents {
		last := evs[MaxPlainEvents-1]
		for _, e := range evs[MaxPlainEvents:] {
			last.Text += " " + e.Text
		}
		evs = append(evs[:MaxPlainEvents-1], last)
	}
	out := evs[:0]
	for _, e := range evs {
		e.Text = text.Clip(e.Text, MaxEventRunes)
		if inCharacter(e.Text) {
			out = append(out, e)
		}
	}
	return out
}
