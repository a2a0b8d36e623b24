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
	var out strings.Builder
	var open []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Sprintf("Can't find end of the tag starting at byte offset %d", i)
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
				return "", fmt.Sprintf("Unexpected end tag at byte offset %d", i)
			case !htmlTags[name]:
				return "", fmt.Sprintf("Unsupported start tag %q at byte offset %d", name, i)
			case closing:
				if len(open) == 0 || open[len(open)-1] != name {
					return "", fmt.Sprintf("Unmatched end tag at byte offset %d", i)
				}
				open = open[:len(open)-1]
			default:
				open = append(open, name)
			}
			i += end + 1
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return "", fmt.Sprintf("Character entity expected at byte offset %d", i)
			}
			r, ok := entity(s[i+1 : i+end])
			if !ok {
				return "", fmt.Sprintf("Unsupported HTML entity %q at byte offset %d", s[i:i+end+1], i)
			}
			out.WriteString(r)
			i += end + 1
		case '>':
			return "", fmt.Sprintf("Unexpected > at byte offset %d", i)
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(open) > 0 {
		return "", fmt.Sprintf("Can't find end tag corresponding to start tag %q", open[len(open)-1])
	}
	return out.String(), ""
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
