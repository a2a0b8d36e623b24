package bot

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"troupe/text"
)

// Split cuts msg into pieces of at most limit characters (runes) each, for
// platforms with a message length limit. It cuts at a paragraph break when it
// can, else at a line break, else after a sentence, else at a space, and
// never inside a word unless a single word is longer than limit. A cut inside
// a ``` fence closes the fence at the end of the piece and reopens it at the
// start of the next, so every piece renders on its own.
func Split(msg string, limit int) []string {
	if limit < 16 {
		limit = 16
	}
	msg = strings.TrimSpace(msg)
	var out []string
	for utf8.RuneCountInString(msg) > limit {
		budget := limit
		// Leave room to close and reopen a fence that the cut lands in.
		if strings.Contains(msg, "```") {
			budget = limit - 4
		}
		head := text.CutRunes(msg, budget)
		cut := bestCut(head)
		// The fence reopened in front of the rest must not give back all
		// the cut took, or the loop never ends: cut at the budget then,
		// and drop a language tag too long to reopen.
		if inFence, lang := fenceAt(msg[:cut]); inFence && !progresses(msg[:cut], lang) {
			cut = len(head)
		}
		piece := strings.TrimRight(msg[:cut], " \t\n")
		rest := strings.TrimLeft(msg[cut:], " \t\n")
		if inFence, lang := fenceAt(piece); inFence {
			if !progresses(piece, lang) {
				lang = ""
			}
			piece += "\n```"
			rest = "```" + lang + "\n" + rest
		}
		// A run of other white space (U+3000, \r) can fill a piece:
		// platforms refuse a blank message.
		if strings.TrimSpace(piece) != "" {
			out = append(out, piece)
		}
		msg = rest
	}
	if msg != "" {
		out = append(out, msg)
	}
	return out
}

// bestCut returns the byte offset in head to cut at.
func bestCut(head string) int {
	min := len(head) / 3
	if i := strings.LastIndex(head, "\n\n"); i > min {
		return i
	}
	if i := strings.LastIndex(head, "\n"); i > min {
		return i
	}
	if i := lastSentenceEnd(head); i > min {
		return i
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > min {
		return i
	}
	// CJK text has no spaces: cutting between two Han characters is not
	// inside a word.
	if r, size := utf8.DecodeLastRuneInString(head); size > 0 && text.IsCJK(r) {
		return len(head)
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
		return i
	}
	return len(head)
}

// lastSentenceEnd returns the offset just after the last sentence end in s.
func lastSentenceEnd(s string) int {
	best := -1
	for i, r := range s {
		switch r {
		case '.', '!', '?', '…':
			next := i + utf8.RuneLen(r)
			if next < len(s) && (s[next] == ' ' || s[next] == '\n' || s[next] == '"' || s[next] == '*') {
				best = next
				if s[next] == '"' || s[next] == '*' {
					best = next + 1
				}
			}
		case '。', '！', '？', '」', '”':
			best = i + utf8.RuneLen(r)
		}
	}
	return best
}

// fenceAt reports whether s ends inside a ``` fence, and its language tag.
func fenceAt(s string) (bool, string) {
	if strings.Count(s, "```")%2 == 0 {
		return false, ""
	}
	return true, fenceLang(s)
}

// progresses reports whether cutting off piece and reopening its fence with
// lang in front of the rest leaves less text than before.
func progresses(piece, lang string) bool {
	return utf8.RuneCountInString(piece) > utf8.RuneCountInString("```"+lang+"\n")
}

// fenceLang returns the language tag of the last fence opened in s.
func fenceLang(s string) string {
	i := strings.LastIndex(s, "```")
	if i < 0 {
		return ""
	}
	tag, _, _ := strings.Cut(s[i+3:], "\n")
	return strings.TrimSpace(tag)
}
