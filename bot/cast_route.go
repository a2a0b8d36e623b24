package bot

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"troupe/text"
)

// routeMember is a cast member as routing sees it.
type routeMember struct {
	Name string
	Away bool
	// Also is another name that addresses the member: its card's display
	// name when it goes by another in the space ("Wren (wren-png)") and no
	// other member answers to it.
	Also string
}

// routeText is one message to route: its text and the names its platform
// resolved from signals beside the text (a reply to a character's message).
type routeText struct {
	Text      string
	Addressed []string
}

// route is who answers a turn.
type route struct {
	// Speakers are the names that answer, in order, each once.
	Speakers []string
	// Away are the members the turn addressed who are away (they do not
	// answer; the user hears so when nobody else does).
	Away []string
	// Nudge marks, per message, one that only mentions characters: it is
	// not stored as a line, the characters it names just speak.
	Nudge []bool
}

// routeTurn decides who answers msgs in a chat with cast, on platform:
// the members addressed — by the platform, then by name in the text — in
// order of first appearance, each once; none addressed, the member who
// spoke last (lastName), else the first member. Away members never answer.
// On Discord a member's name anywhere in the text addresses it (whole
// words, any case; names in CJK scripts as plain substrings); on Telegram
// and the console it takes "@Name", or the name followed by a comma or
// colon at the start. A name not in the cast is plain text.
func routeTurn(platform string, msgs []routeText, cast []routeMember, lastName string) route {
	var r route
	var named []string
	seen := map[string]bool{}
	addName := func(n string) {
		if !seen[n] {
			seen[n] = true
			named = append(named, n)
		}
	}
	for _, m := range msgs {
		addressed := 0
		for _, a := range m.Addressed {
			if mm, ok := memberNamed(cast, a); ok {
				addName(mm.Name)
				addressed++
			}
		}
		found, rest := namesIn(platform, m.Text, cast)
		for _, n := range found {
			addName(n)
		}
		r.Nudge = append(r.Nudge, len(found)+addressed > 0 && strings.Trim(rest, " \t\r\n,，、:：") == "")
	}
	for _, n := range named {
		mm, _ := memberNamed(cast, n)
		if mm.Away {
			r.Away = append(r.Away, mm.Name)
			continue
		}
		r.Speakers = append(r.Speakers, mm.Name)
	}
	if len(named) > 0 {
		return r
	}
	if mm, ok := memberNamed(cast, lastName); ok && !mm.Away {
		r.Speakers = []string{mm.Name}
		return r
	}
	for _, mm := range cast {
		if !mm.Away {
			r.Speakers = []string{mm.Name}
			return r
		}
	}
	for _, mm := range cast {
		r.Away = append(r.Away, mm.Name)
	}
	return r
}

// memberNamed finds the member called name (any case).
func memberNamed(cast []routeMember, name string) (routeMember, bool) {
	if name == "" {
		return routeMember{}, false
	}
	for _, m := range cast {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	for _, m := range cast {
		if m.Also != "" && strings.EqualFold(m.Also, name) {
			return m, true
		}
	}
	return routeMember{}, false
}

// nameHit is where a member's name addresses it in a text.
type nameHit struct {
	at, end int
	name    string
	// mention: an "@Name", which a nudge may consist of.
	mention bool
}

// namesIn returns the members text addresses, by first appearance, and
// the text without its @-mentions.
func namesIn(platform, said string, cast []routeMember) (names []string, rest string) {
	// Longer names first, so "Mara (2)" is not read as "Mara"; a member's
	// other name is looked for after the names.
	type written struct{ text, name string }
	var order []written
	for _, m := range cast {
		order = append(order, written{m.Name, m.Name})
	}
	for _, m := range cast {
		if m.Also != "" {
			order = append(order, written{m.Also, m.Name})
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return len(order[i].text) > len(order[j].text) })
	lower := strings.ToLower(said)
	folded := len(lower) == len(said)
	if !folded {
		// Case folding changed byte offsets: match as written.
		lower = said
	}
	taken := make([]bool, len(said)+1)
	var hits []nameHit
	claim := func(at, end int, name string, mention bool) bool {
		for i := at; i < end; i++ {
			if taken[i] {
				return false
			}
		}
		for i := at; i < end; i++ {
			taken[i] = true
		}
		hits = append(hits, nameHit{at: at, end: end, name: name, mention: mention})
		return true
	}
	for _, m := range order {
		n := strings.ToLower(m.text)
		if !folded || len(n) != len(m.text) {
			n = m.text
		}
		if strings.TrimSpace(n) == "" {
			continue
		}
		cjk := text.HasCJK(m.text)
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], n)
			if i < 0 {
				break
			}
			at, end := from+i, from+i+len(n)
			from = end
			bounded := cjk || (!wordRune(lastRune(said[:at])) && !wordRune(firstRune(said[end:])))
			if !bounded {
				continue
			}
			switch {
			case at > 0 && said[at-1] == '@':
				claim(at-1, end, m.name, true)
			case platform == PlatformDiscord:
				claim(at, end, m.name, false)
			case strings.TrimSpace(said[:at]) == "" && startsWithAny(said[end:], ",", "，", ":", "："):
				claim(at, end, m.name, false)
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	var b strings.Builder
	last := 0
	for _, h := range hits {
		names = append(names, h.name)
		if h.mention {
			b.WriteString(said[last:h.at])
			last = h.end
		}
	}
	b.WriteString(said[last:])
	if len(hits) == 0 {
		return nil, said
	}
	return names, b.String()
}

func startsWithAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func wordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	if r == utf8.RuneError {
		return ' '
	}
	return r
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return ' '
	}
	return r
}
