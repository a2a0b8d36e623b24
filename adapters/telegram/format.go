package telegram

import (
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

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
func splitMessage(text string) []string { return splitWithin(text, maxText) }

// splitWithin is splitMessage for pieces of at most limit UTF-16 units.
func splitWithin(text string, limit int) []string {
	var out []string
	for _, p := range bot.Split(text, limit) {
		if utf16Len(p) <= limit {
			out = append(out, p)
			continue
		}
		// Every rune is at most two units.
		out = append(out, bot.Split(p, limit/2)...)
	}
	return out
}

// headHTML is a scene speaker's name as the first line of its reply: bold,
// escaped; "" for no name.
func headHTML(name string) string {
	if name == "" {
		return ""
	}
	return "<b>" + escapeHTML(name) + "</b>\n"
}

// headPlain is headHTML for a message Telegram refused as HTML.
func headPlain(name string) string {
	if name == "" {
		return ""
	}
	return name + "\n"
}

// leadName is the speaker's name a message of the bot starts with: a bold
// entity at offset 0 followed by a line break (headHTML), or "".
func leadName(text string, ents []tgbotapi.MessageEntity) string {
	if len(ents) == 0 || ents[0].Type != "bold" || ents[0].Offset != 0 || ents[0].Length <= 0 {
		return ""
	}
	units := utf16.Encode([]rune(text))
	n := ents[0].Length
	if n >= len(units) || units[n] != '\n' {
		return ""
	}
	return strings.TrimSpace(string(utf16.Decode(units[:n])))
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
