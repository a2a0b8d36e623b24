package memory

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// tagRe matches a provenance tag: [chat:<id>].
var tagRe = regexp.MustCompile(`\[chat:([A-Za-z0-9_.:-]+)\]`)

// chatBlockRe matches a handbook chat block's heading, in English or Chinese.
var chatBlockRe = regexp.MustCompile(`^# (?:Chat: .*\(([A-Za-z0-9_.:-]+)\)|局：.*（([A-Za-z0-9_.:-]+)）)\s*$`)

// Tags returns the chat ids a line is tagged with.
func Tags(line string) []string {
	var ids []string
	for _, m := range tagRe.FindAllStringSubmatch(line, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// StripTags removes every provenance tag, for injecting memory into a prompt.
func StripTags(text string) string {
	if !strings.Contains(text, "[chat:") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		// Removing a tag can join its neighbours into another one.
		for tagRe.MatchString(l) {
			l = tagRe.ReplaceAllString(l, "")
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// blockID returns the chat id of a chat block heading, or "".
func blockID(line string) string {
	m := chatBlockRe.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return ""
	}
	if m[1] != "" {
		return m[1]
	}
	return m[2]
}

// ChatBlockHeading is the heading of a chat's handbook block.
func ChatBlockHeading(lang, name, id string) string {
	if lang == "zh" {
		return "# 局：" + name + "（" + id + "）"
	}
	return "# Chat: " + name + " (" + id + ")"
}

// memoryLine is one line of a handbook or resident with where it sits.
type memoryLine struct {
	text string
	// block is the chat id of the chat block the line is in, or "".
	block string
}

func scanLines(text string) []memoryLine {
	var out []memoryLine
	block := ""
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "# ") {
			block = blockID(t)
		}
		out = append(out, memoryLine{text: l, block: block})
	}
	return out
}

// Blocks returns the chat ids that have a chat block in a handbook.
func Blocks(handbook string) map[string]bool {
	ids := map[string]bool{}
	for _, l := range scanLines(handbook) {
		if l.block != "" {
			ids[l.block] = true
		}
	}
	return ids
}

// HandEdits returns the untagged entries outside chat blocks: lines a person
// wrote by hand, which consolidation must keep. Headings, blank lines and
// the resident's title are not entries.
func HandEdits(text string) []string {
	var out []string
	for _, l := range scanLines(text) {
		t := strings.TrimSpace(l.text)
		if l.block != "" || t == "" || strings.HasPrefix(t, "#") || len(Tags(t)) > 0 {
			continue
		}
		if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") {
			out = append(out, t)
		}
	}
	return out
}

// Forget removes a chat from a handbook or resident without a model: its
// chat block goes, entries only it supports go, and entries other chats also
// support lose its tag. Untagged entries (hand edits) stay.
func Forget(text, chatID string) string {
	if text == "" {
		return ""
	}
	tag := "[chat:" + chatID + "]"
	var out []string
	for _, l := range scanLines(text) {
		if l.block == chatID {
			continue
		}
		if strings.Contains(l.text, tag) {
			rest := l.text
			// Removing a tag can join its neighbours into it again
			// ("[chat:[chat:c1]c1]"): remove until none is left.
			for strings.Contains(rest, tag) {
				rest = strings.ReplaceAll(rest, tag, "")
			}
			// Inside another chat's block the line is that chat's own
			// record: it stays, without the deleted chat's tag.
			if l.block == "" && len(Tags(rest)) == 0 {
				continue
			}
			l.text = strings.TrimRight(collapseSpaces(rest), " \t")
		}
		out = append(out, l.text)
	}
	return collapseBlankLines(strings.Join(out, "\n"))
}

func collapseSpaces(s string) string {
	for strings.Contains(s, "  [chat:") {
		s = strings.ReplaceAll(s, "  [chat:", " [chat:")
	}
	return s
}

func collapseBlankLines(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}

// ResidentMarker ends a resident summary cut for length.
var ResidentMarker = map[string]string{"en": "(… the rest is omitted for length)", "zh": "（……余下内容因篇幅从略）"}

// Budget is the per-turn envelope shared by the resident summary, the ledger
// snapshot and the roster.
type Budget struct {
	ResidentMax int
	Envelope    int
	MinUseful   int
}

// FitResident fits the resident summary into what the ledger and roster
// (others characters) leave of the envelope: whole if it fits; otherwise cut
// at the last paragraph (else line) boundary past MinUseful with a marker;
// left out when less than MinUseful would remain.
func FitResident(lang, text string, others int, b Budget) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	allowance := min(b.ResidentMax, b.Envelope-others)
	if utf8.RuneCountInString(text) <= allowance {
		return text
	}
	if allowance < b.MinUseful {
		return ""
	}
	marker := ResidentMarker[langOr(lang)]
	room := allowance - utf8.RuneCountInString(marker) - 1
	if room < 1 {
		// Not even the marker fits (min_useful_chars below its length).
		return ""
	}
	head := PrefixRunes(text, room)
	cut := len(head)
	if i := strings.LastIndex(head, "\n\n"); i >= 0 && utf8.RuneCountInString(head[:i]) >= b.MinUseful {
		cut = i
	} else if i := strings.LastIndex(head, "\n"); i >= 0 && utf8.RuneCountInString(head[:i]) >= b.MinUseful {
		cut = i
	}
	return strings.TrimRight(head[:cut], " \t\n") + "\n" + marker
}

// PrefixRunes returns the longest prefix of s with at most n runes.
func PrefixRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
