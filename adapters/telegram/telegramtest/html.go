package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
)

// htmlTags are the tags Telegram's HTML parse mode accepts.
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// parseHTML returns the text a client shows for s sent with parse_mode
// HTML, or, in Telegram's words, why Telegram refuses it. Like Telegram, it accepts only
// the supported tags, properly nested, and the entities &lt; &gt; &amp;
// &quot; and numeric ones; any other < or & is an error.
func parseHTML(s string) (shown, refused string) {
	shown, _, refused = parseHTMLEntities(s)
	return shown, refused
}

// Entity is a formatting entity of a message's text, with offset and
// length in UTF-16 code units as Telegram counts them.
type Entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

// entityTypes are the entity types of the tags that make one.
var entityTypes = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "code": "code", "pre": "pre",
}

// parseHTMLEntities is parseHTML that also returns the entities of the
// formatting tags, in the order they close.
func parseHTMLEntities(s string) (shown string, ents []Entity, refused string) {
	var out strings.Builder
	var open []string
	var starts []int
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", nil, fmt.Sprintf("Can't find end of the tag starting at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			closing := strings.HasPrefix(tag, "/")
			name := strings.ToLower(strings.TrimPrefix(tag, "/"))
			if f := strings.Fields(name); len(f) > 0 {
				name = f[0]
			} else {
				name = ""
			}
			switch {
			case !htmlTags[name] && closing:
				return "", nil, fmt.Sprintf("Unexpected end tag at byte offset %d", i)
			case !htmlTags[name]:
				return "", nil, fmt.Sprintf("Unsupported start tag %q at byte offset %d", name, i)
			case closing:
				if len(open) == 0 || open[len(open)-1] != name {
					return "", nil, fmt.Sprintf("Unmatched end tag at byte offset %d", i)
				}
				start, end := starts[len(starts)-1], utf16Len(out.String())
				if typ := entityTypes[name]; typ != "" && end > start {
					ents = append(ents, Entity{Type: typ, Offset: start, Length: end - start})
				}
				open, starts = open[:len(open)-1], starts[:len(starts)-1]
			default:
				open, starts = append(open, name), append(starts, utf16Len(out.String()))
			}
			i += end + 1
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return "", nil, fmt.Sprintf("Character entity expected at byte offset %d", i)
			}
			r, ok := entity(s[i+1 : i+end])
			if !ok {
				return "", nil, fmt.Sprintf("Unsupported HTML entity %q at byte offset %d", s[i:i+end+1], i)
			}
			out.WriteString(r)
			i += end + 1
		case '>':
			return "", nil, fmt.Sprintf("Unexpected > at byte offset %d", i)
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(open) > 0 {
		return "", nil, fmt.Sprintf("Can't find end tag corresponding to start tag %q", open[len(open)-1])
	}
	return out.String(), ents, ""
}

func entity(name string) (string, bool) {
	switch name {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
			num, base = hex, 16
		}
		n, err := strconv.ParseInt(num, base, 32)
		if err == nil && n > 0 {
			return string(rune(n)), true
		}
	}
	return "", false
}
