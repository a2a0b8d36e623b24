package cards

import (
	"hash/fnv"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Env is what macros read, and setvar writes, while one chat's text is
// expanded. The clock and the randomness are injected so that a test sees
// the same text every time.
type Env struct {
	// Char is the character's name as {{char}} says it (its nickname when
	// the card has one); User is the name of the person playing.
	Char, User string
	// Original is what {{original}} stands for: troupe's own text that a
	// card's system_prompt or post_history_instructions replaces.
	Original string
	// Now is the time {{time}}, {{date}} and their kin show.
	Now time.Time
	// Idle is how long the chat was quiet before this turn
	// ({{idle_duration}}).
	Idle time.Duration
	// LastMessage is the chat's latest message ({{lastMessage}}).
	LastMessage string
	// ChatID makes {{pick}} stable per chat.
	ChatID string
	// Rand returns a number in [0, 1) for {{random}} and {{roll}}; nil
	// always returns 0.
	Rand func() float64
	// Vars are the chat's variables ({{setvar}}, {{getvar}}); setvar
	// creates the map when it is nil.
	Vars map[string]string

	// varBytes counts what {{getvar}} has inserted in one Expand call.
	varBytes int
}

// Variable limits: a value longer than maxVarBytes is not stored, and one
// Expand call inserts at most maxVarExpansion bytes of variables, so that
// text like {{setvar::a::{{getvar::a}}{{getvar::a}}}} repeated cannot grow
// without end. A macro over a limit stays as written.
const (
	maxVarBytes     = 16 << 10
	maxVarExpansion = 64 << 10
)

// maxMacroNesting bounds nested macros ({{random::{{char}}::b}}), so that
// hostile text cannot recurse without end.
const maxMacroNesting = 8

// Roll limits: a dice macro beyond them is left as written.
const (
	maxDice  = 100
	maxFaces = 1_000_000
)

var trimMacro = regexp.MustCompile(`(?i)(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*`)

// Expand replaces the macros in text. An unknown macro, or one whose
// arguments do not make sense, stays as written; {{// …}} comments are
// removed without expanding what they contain.
func (e *Env) Expand(text string) string {
	if !strings.ContainsAny(text, "{<") {
		return text
	}
	if strings.Contains(text, "<") {
		text = angleMacros(e.Char, e.User).Replace(text)
	}
	if !strings.Contains(text, "{{") {
		return text
	}
	if strings.Contains(strings.ToLower(text), "{{trim}}") {
		text = trimMacro.ReplaceAllString(text, "")
	}
	e.varBytes = 0
	return e.expand(text, 0)
}

// expandQuoted expands the macros of text one at a time with expand and
// passes each value through quote, leaving the text between them as
// written. A regular expression's pattern takes macro values as literals
// that way (quote = regexp.QuoteMeta). A macro nested in another is quoted
// once, with the value of the outer one.
func expandQuoted(text string, expand, quote func(string) string) string {
	var out strings.Builder
	for {
		start, end := nextMacro(text)
		if start < 0 {
			out.WriteString(text)
			return out.String()
		}
		out.WriteString(text[:start])
		out.WriteString(quote(expand(text[start:end])))
		text = text[end:]
	}
}

// angleNames are the older macros written in angle brackets.
var angleNames = []string{"<USER>", "<BOT>", "<CHAR>", "<user>", "<bot>", "<char>"}

// nextMacro returns where text's first macro starts and ends: a {{…}} with
// the macros nested in it, or an angle-bracket name; -1, -1 when none.
func nextMacro(text string) (start, end int) {
	start, end = -1, -1
	if i := strings.Index(text, "{{"); i >= 0 {
		if j := closing(text, i+2); j >= 0 {
			start, end = i, j+2
		}
	}
	for _, name := range angleNames {
		if i := strings.Index(text, name); i >= 0 && (start < 0 || i < start) {
			start, end = i, i+len(name)
		}
	}
	return start, end
}

func angleMacros(char, user string) *strings.Replacer {
	return strings.NewReplacer("<USER>", user, "<BOT>", char, "<CHAR>", char, "<user>", user, "<bot>", char, "<char>", char)
}

// expand replaces the macros of text, innermost first.
func (e *Env) expand(text string, nesting int) string {
	var out strings.Builder
	for i := 0; ; {
		j := strings.Index(text[i:], "{{")
		if j < 0 {
			out.WriteString(text[i:])
			return out.String()
		}
		start := i + j
		end := closing(text, start+2)
		if end < 0 {
			out.WriteString(text[i:])
			return out.String()
		}
		out.WriteString(text[i:start])
		inner := text[start+2 : end]
		i = end + 2
		if strings.HasPrefix(strings.TrimSpace(inner), "//") {
			continue
		}
		if nesting < maxMacroNesting && strings.Contains(inner, "{{") {
			inner = e.expand(inner, nesting+1)
		}
		if v, ok := e.macro(inner, start); ok {
			out.WriteString(v)
		} else {
			out.WriteString("{{" + inner + "}}")
		}
	}
}

// closing returns the index of the "}}" that closes a macro opened before
// from, counting nested "{{", or -1.
func closing(text string, from int) int {
	depth := 0
	for i := from; i+1 < len(text); i++ {
		switch {
		case text[i] == '{' && text[i+1] == '{':
			depth++
			i++
		case text[i] == '}' && text[i+1] == '}':
			if depth == 0 {
				return i
			}
			depth--
			i++
		}
	}
	return -1
}

// macro evaluates one macro body (what is between the braces).
func (e *Env) macro(body string, offset int) (string, bool) {
	name, arg, sep := macroName(body)
	switch name {
	case "char":
		return e.Char, sep == ""
	case "user":
		return e.User, sep == ""
	case "original":
		return e.Original, sep == ""
	case "newline":
		return "\n", sep == ""
	case "noop", "trim":
		return "", sep == ""
	case "time":
		return e.Now.Format("3:04 PM"), sep == ""
	case "date":
		return e.Now.Format("January 2, 2006"), sep == ""
	case "weekday":
		return e.Now.Weekday().String(), sep == ""
	case "isodate":
		return e.Now.Format("2006-01-02"), sep == ""
	case "isotime":
		return e.Now.Format("15:04"), sep == ""
	case "idle_duration":
		return humanDuration(e.Idle), sep == ""
	case "lastmessage":
		return e.LastMessage, sep == ""
	case "random", "pick":
		opts := options(arg, sep)
		if len(opts) == 0 {
			return "", false
		}
		if name == "pick" {
			return opts[e.stable(body, offset, len(opts))], true
		}
		return opts[e.draw(len(opts))], true
	case "roll":
		return e.roll(arg)
	case "setvar":
		k, v, ok := strings.Cut(arg, "::")
		if sep != "::" || !ok || strings.TrimSpace(k) == "" || len(v) > maxVarBytes {
			return "", false
		}
		if e.Vars == nil {
			e.Vars = map[string]string{}
		}
		e.Vars[strings.TrimSpace(k)] = v
		return "", true
	case "getvar":
		v := e.Vars[strings.TrimSpace(arg)]
		if sep != "::" || strings.TrimSpace(arg) == "" || e.varBytes+len(v) > maxVarExpansion {
			return "", false
		}
		e.varBytes += len(v)
		return v, true
	}
	return "", false
}

// macroName splits a body into its lower-case name, its argument text and
// the separator between them: "::", ":", " " or none.
func macroName(body string) (name, arg, sep string) {
	body = strings.TrimSpace(body)
	cut := len(body)
	for _, s := range []string{"::", ":", " "} {
		if i := strings.Index(body, s); i >= 0 && i < cut {
			cut, sep = i, s
		}
	}
	if sep == "" {
		return strings.ToLower(strings.TrimSpace(body)), "", ""
	}
	// "a::b" is found as "::" even though ":" is at the same place.
	if sep == ":" && strings.HasPrefix(body[cut:], "::") {
		sep = "::"
	}
	return strings.ToLower(strings.TrimSpace(body[:cut])), body[cut+len(sep):], sep
}

// options splits {{random::a::b}} at "::" and {{random:a,b}} at commas (a
// backslash keeps a comma).
func options(arg, sep string) []string {
	if sep == "" {
		return nil
	}
	if sep == "::" {
		return strings.Split(arg, "::")
	}
	const comma = "\x00"
	arg = strings.ReplaceAll(arg, `\,`, comma)
	parts := strings.Split(arg, ",")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.TrimSpace(p), comma, ",")
	}
	return parts
}

// draw returns a random index below n.
func (e *Env) draw(n int) int {
	if e.Rand == nil {
		return 0
	}
	return min(int(e.Rand()*float64(n)), n-1)
}

// stable returns an index below n that is the same for the same chat, macro
// and place in the text.
func (e *Env) stable(body string, offset, n int) int {
	h := fnv.New64a()
	h.Write([]byte(e.ChatID))
	h.Write([]byte{0})
	h.Write([]byte(body))
	h.Write([]byte{0, byte(offset), byte(offset >> 8), byte(offset >> 16)})
	return int(h.Sum64() % uint64(n))
}

var dice = regexp.MustCompile(`^(\d*)d(\d+)\s*([+-]\s*\d+)?$`)

// roll throws NdM (+K) dice; a bare number is one die with that many faces.
func (e *Env) roll(arg string) (string, bool) {
	arg = strings.ToLower(strings.TrimSpace(arg))
	if n, err := strconv.Atoi(arg); err == nil {
		arg = "1d" + strconv.Itoa(n)
	}
	m := dice.FindStringSubmatch(arg)
	if m == nil {
		return "", false
	}
	count := 1
	if m[1] != "" {
		count, _ = strconv.Atoi(m[1])
	}
	faces, err := strconv.Atoi(m[2])
	if err != nil || count < 1 || count > maxDice || faces < 1 || faces > maxFaces {
		return "", false
	}
	total := 0
	if m[3] != "" {
		bonus, err := strconv.Atoi(strings.ReplaceAll(m[3], " ", ""))
		if err != nil || bonus > maxFaces || bonus < -maxFaces {
			return "", false
		}
		total = bonus
	}
	for range count {
		total += 1 + e.draw(faces)
	}
	return strconv.Itoa(total), true
}

// humanDuration says a duration the way a person would ("5 minutes", "a
// day").
func humanDuration(d time.Duration) string {
	s := math.Abs(d.Seconds())
	unit := func(n float64, one, many string) string {
		if r := math.Round(n); r > 1 {
			return strconv.Itoa(int(r)) + " " + many
		}
		return one
	}
	switch {
	case s < 45:
		return "a few seconds"
	case s < 90:
		return "a minute"
	case s < 45*60:
		return unit(s/60, "a minute", "minutes")
	case s < 90*60:
		return "an hour"
	case s < 22*3600:
		return unit(s/3600, "an hour", "hours")
	case s < 36*3600:
		return "a day"
	case s < 26*86400:
		return unit(s/86400, "a day", "days")
	case s < 45*86400:
		return "a month"
	case s < 320*86400:
		return unit(s/(30*86400), "a month", "months")
	case s < 548*86400:
		return "a year"
	}
	return unit(s/(365*86400), "a year", "years")
}
