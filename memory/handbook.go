package memory

import (
	"regexp"
	"strings"

	"troupe/models"
	"troupe/text"
)

// tagRe matches a provenance tag: [chat:<id>].
var tagRe = regexp.MustCompile(`\[chat:([A-Za-z0-9_.:-]+)\]`)

// chatBlockRe matches a handbook chat block's heading, in English or Chinese.
var chatBlockRe = regexp.MustCompile(`^# (?:Chat: .*\(([A-Za-z0-9_.:-]+)\)|局：.*（([A-Za-z0-9_.:-]+)）)\s*$`)

// chatHeadingRe matches any heading that looks like a chat block's, at any
// level, in either language and either kind of brackets: "## chat: … (id)".
var chatHeadingRe = regexp.MustCompile(`(?i)^#{1,6}\s*(?:chat|局)\s*[:：].*[(（]\s*([A-Za-z0-9_.:-]+)\s*[)）]\s*$`)

// bracketTagRe matches what a tag in square brackets looks like when it is
// not written [chat:<id>]: "[Chat:id]", "[chat: id]", "[chat:a,b]",
// "[chat id]", "【局：id】". Well-formed tags are removed before it is
// applied; "[chatter]" and "【局势】" are words, not tags.
var bracketTagRe = regexp.MustCompile(`(?i)[\[【]\s*(?:chats?\s*(?:[:：\]】,]|\s)|局\s*[:：])`)

// parenTagRe matches a tag in parentheses, "(chat id)" or "（局：id）": with
// its colon, or naming a chat, it is a tag; "(chat room)" is prose.
var parenTagRe = regexp.MustCompile(`(?i)[(（]\s*(?:chat|局)\s*([:：]?)\s*([A-Za-z0-9_.:-]+)\s*[)）]`)

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

// sourceLine ends a chat block.
var sourceLine = map[string]string{"en": "Source: chat ", "zh": "来源：局 "}

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

// HandEdits returns the lines of a handbook or resident a person wrote by
// hand, which consolidation must keep: the untagged lines outside chat
// blocks whose hash is in the file's stored hand-line set (see
// models.HandLineHash). Blank lines and the format's own headings are not
// hand edits; no line the scribe wrote ever is, since an untagged line from
// the scribe is refused.
func HandEdits(text, handLines string) []string {
	if handLines == "" {
		return nil
	}
	hand := models.HandLineSet(handLines)
	var out []string
	for _, l := range scanLines(text) {
		t := strings.TrimSpace(l.text)
		if l.block != "" || t == "" || blockID(t) != "" || isFormatHeading(t) || len(Tags(t)) > 0 {
			continue
		}
		if hand[models.HandLineHash(t)] {
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
	for _, l := range scanLines(doc) {
		t := strings.TrimSpace(l.text)
		if l.block != "" || blockID(t) != "" {
			continue
		}
		if hand[t] || isFormatHeading(t) {
			out = append(out, l.text)
		}
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

// isFormatHeading reports whether a line is one of the headings the
// handbook's cross-chat sections or the resident are made of, in either
// language.
func isFormatHeading(line string) bool {
	for _, lang := range []string{"en", "zh"} {
		for _, h := range CrossHeadings[lang] {
			if headingMatches(line, h) {
				return true
			}
		}
		for _, h := range ResidentHeadings[lang] {
			if headingMatches(line, h) {
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
	for _, l := range scanLines(handbook) {
		if l.block == "" && blockID(l.text) == "" {
			out = append(out, l.text)
		}
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

// ChatBlock is a chat's handbook block, built from its recap: the heading,
// the recap's sections (its title is the heading's business) and the
// source line. A line of the recap that would read as a top-level heading is
// moved a level down, so the block cannot end early.
func ChatBlock(lang, id, name, recap string) string {
	lang = langOr(lang)
	_, body, _ := strings.Cut(strings.TrimSpace(recap), "\n")
	var b strings.Builder
	b.WriteString(ChatBlockHeading(lang, oneLine(name), id))
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "# ") {
			l = "#" + t
		}
		b.WriteString("\n" + l)
	}
	b.WriteString("\n" + sourceLine[lang] + id)
	return b.String()
}

// Forget removes a chat from a handbook or resident without a model: its
// chat block goes, and so does every entry outside a chat block that
// carries its tag, whole — an entry other chats also support may hold the
// forgotten chat's words beside theirs, and no rule can tell which words
// are whose, so the next consolidation writes the others' facts again from
// their live recaps. Untagged entries (hand edits) stay.
func Forget(text, chatID string) string {
	// Taking a tag out can turn what is left of a line into something
	// else ("[chat:c2]# Chat: (c2)" becomes c2's block heading): forget
	// again until nothing changes. Each pass only takes away, so this
	// ends.
	out := forgetOnce(text, chatID)
	for out != text {
		text, out = out, forgetOnce(out, chatID)
	}
	return out
}

// forgetOnce is one pass of Forget over text.
func forgetOnce(doc, chatID string) string {
	if doc == "" {
		return ""
	}
	tag := "[chat:" + chatID + "]"
	var out []string
	for _, l := range scanLines(doc) {
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
			// record (the engine built the block from its recap): it
			// stays, without the deleted chat's tag.
			if l.block == "" {
				continue
			}
			l.text = strings.TrimRight(collapseSpaces(rest), " \t")
		}
		out = append(out, l.text)
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

func collapseSpaces(s string) string {
	for strings.Contains(s, "  [chat:") {
		s = strings.ReplaceAll(s, "  [chat:", " [chat:")
	}
	return s
}
