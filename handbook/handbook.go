// Package handbook is the text format of a card's long memory in a space:
// the handbook (one block per chat, which the engine builds from the chat's
// recap, then the cross-chat sections the scribe writes) and the resident
// summary. Every line a scribe writes carries provenance tags, [chat:<id>],
// naming the chats that support it; lines a person wrote by hand carry
// none and are known by their hashes (HandLineHash). The package reads and
// rewrites that format without a model or a database: it finds blocks,
// tags and hand edits, and removes a forgotten chat (Forget). It imports
// nothing of troupe's but text, so the store can purge a chat inside its own
// transaction, as it does beliefs with package belief.
package handbook

import (
	"regexp"
	"strings"

	"troupe/text"
)

// tagRe matches a provenance tag: [chat:<id>].
var tagRe = regexp.MustCompile(`\[chat:([A-Za-z0-9_.:-]+)\]`)

// chatBlockRe matches a handbook chat block's heading, in English or Chinese.
var chatBlockRe = regexp.MustCompile(`^# (?:Chat: .*\(([A-Za-z0-9_.:-]+)\)|局：.*（([A-Za-z0-9_.:-]+)）)\s*$`)

// CrossHeadings are the handbook's cross-chat section headings, which the
// scribe writes; the chat blocks before them are the engine's.
var CrossHeadings = map[string][3]string{
	"en": {"# Characters (across chats)", "# World facts (across chats)", "# The user's play preferences (across chats)"},
	"zh": {"# 人物（跨局）", "# 世界设定（跨局）", "# 用户的玩法偏好（跨局）"},
}

// ResidentHeadings are the resident summary's title and four section
// headings.
var ResidentHeadings = map[string][5]string{
	"en": {"# Earlier chats", "## Characters and relationships now", "## Established facts", "## Unfinished business", "## The user's play preferences"},
	"zh": {"# 往局记忆", "## 人物与关系现状", "## 既定事实", "## 未了之事", "## 用户的玩法偏好"},
}

// SourceLine ends a chat block.
var SourceLine = map[string]string{"en": "Source: chat ", "zh": "来源：局 "}

// Tags returns the chat ids a line is tagged with.
func Tags(line string) []string {
	var ids []string
	for _, m := range tagRe.FindAllStringSubmatch(line, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// StripTags removes every provenance tag, for injecting memory into a prompt.
func StripTags(doc string) string {
	if !strings.Contains(doc, "[chat:") {
		return doc
	}
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		// Removing a tag can join its neighbours into another one.
		for tagRe.MatchString(l) {
			l = tagRe.ReplaceAllString(l, "")
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// DropTags replaces every provenance tag in a line with a space, for
// looking at what the line says besides its tags.
func DropTags(line string) string {
	// Removing a tag can join its neighbours into another one.
	for tagRe.MatchString(line) {
		line = tagRe.ReplaceAllString(line, " ")
	}
	return line
}

// HeadingMatches reports whether a line is the heading want, ignoring case,
// surrounding space and a trailing colon.
func HeadingMatches(line, want string) bool {
	line = strings.TrimRight(strings.TrimSpace(line), ":：")
	return strings.EqualFold(line, want)
}

// BlockID returns the chat id of a chat block heading, or "".
func BlockID(line string) string {
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

// Line is one line of a handbook or resident with where it sits.
type Line struct {
	Text string
	// Block is the chat id of the chat block the line is in, or "".
	Block string
}

func Lines(doc string) []Line {
	var out []Line
	block := ""
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "# ") {
			block = BlockID(t)
		}
		out = append(out, Line{Text: l, Block: block})
	}
	return out
}

// Blocks returns the chat ids that have a chat block in a handbook.
func Blocks(handbook string) map[string]bool {
	ids := map[string]bool{}
	for _, l := range Lines(handbook) {
		if l.Block != "" {
			ids[l.Block] = true
		}
	}
	return ids
}

// HandEdits returns the lines of a handbook or resident a person wrote by
// hand, which consolidation must keep: the untagged lines outside chat
// blocks whose hash is in the file's stored hand-line set (see
// HandLineHash). Blank lines and the format's own headings are not
// hand edits; no line the scribe wrote ever is, since an untagged line from
// the scribe is refused.
func HandEdits(doc, handLines string) []string {
	if handLines == "" {
		return nil
	}
	hand := HandLineSet(handLines)
	var out []string
	for _, l := range Lines(doc) {
		t := strings.TrimSpace(l.Text)
		if l.Block != "" || t == "" || BlockID(t) != "" || IsFormatHeading(t) || len(Tags(t)) > 0 {
			continue
		}
		if hand[HandLineHash(t)] {
			out = append(out, t)
		}
	}
	return out
}

// HandOnly is what a handbook or resident keeps for a rebuild (the hard
// path): the lines a person wrote (HandEdits) under the format's own
// headings, without a chat block or a line the scribe wrote.
func HandOnly(doc, handLines string) string {
	hand := map[string]bool{}
	for _, h := range HandEdits(doc, handLines) {
		hand[h] = true
	}
	if len(hand) == 0 {
		return ""
	}
	var out []string
	for _, l := range Lines(doc) {
		t := strings.TrimSpace(l.Text)
		if l.Block != "" || BlockID(t) != "" {
			continue
		}
		if hand[t] || IsFormatHeading(t) {
			out = append(out, l.Text)
		}
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

// IsFormatHeading reports whether a line is one of the headings the
// handbook's cross-chat sections or the resident are made of, in either
// language.
func IsFormatHeading(line string) bool {
	for _, lang := range []string{"en", "zh"} {
		for _, h := range CrossHeadings[lang] {
			if HeadingMatches(line, h) {
				return true
			}
		}
		for _, h := range ResidentHeadings[lang] {
			if HeadingMatches(line, h) {
				return true
			}
		}
	}
	return false
}

// CrossSections returns a handbook without its chat blocks: what the scribe
// writes.
func CrossSections(handbook string) string {
	var out []string
	for _, l := range Lines(handbook) {
		if l.Block == "" && BlockID(l.Text) == "" {
			out = append(out, l.Text)
		}
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

// ChatBlock is a chat's handbook block, built from its recap: the heading,
// the recap's sections (its title is the heading's business) and the
// source line. A line of the recap that would read as a top-level heading is
// moved a level down, so the block cannot end early.
func ChatBlock(lang, id, name, recap string) string {
	if lang != "zh" {
		lang = "en"
	}
	_, body, _ := strings.Cut(strings.TrimSpace(recap), "\n")
	var b strings.Builder
	b.WriteString(ChatBlockHeading(lang, strings.Join(strings.Fields(name), " "), id))
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "# ") {
			l = "#" + t
		}
		b.WriteString("\n" + l)
	}
	b.WriteString("\n" + SourceLine[lang] + id)
	return b.String()
}
