package telegram

import (
	"strings"

	"troupe/bot"
)

// maxText is Telegram's limit on a message's text after entity parsing, in
// UTF-16 code units.
const maxText = 4096

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapeHTML makes text safe for parse mode HTML: every <, > and & becomes
// an entity, so model text (markdown, stray brackets) shows as written.
func escapeHTML(text string) string { return htmlEscaper.Replace(text) }

// splitMessage cuts text into pieces Telegram accepts, at paragraph, then
// line, then sentence boundaries (bot.Split). bot.Split counts runes and
// Telegram UTF-16 units, so a piece heavy with emoji is cut again.
func splitMessage(text string) []string {
	var out []string
	for _, p := range bot.Split(text, maxText) {
		if utf16Len(p) <= maxText {
			out = append(out, p)
			continue
		}
		// Every rune is at most two units.
		out = append(out, bot.Split(p, maxText/2)...)
	}
	return out
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
