package belief

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxTextRunes is the longest belief text accepted, in characters.
const MaxTextRunes = 300

// fieldPatterns are the shapes of a field written into a belief's text: a
// confidence in brackets or after a label, an importance with a number, an
// id with its prompt prefix, a bare ULID, a turn number as the prompt writes
// it. Ordinary words ("I am sure she lied") match none of them.
var fieldPatterns = []struct {
	re    *regexp.Regexp
	field string
}{
	{regexp.MustCompile(`(?i)[(\[（【]\s*(sure|likely|doubtful|certain|确信|多半|存疑)\s*[)\]）】]`), "confidence"},
	{regexp.MustCompile(`(?i)\b(confidence|certainty)\s*[:=：]`), "confidence"},
	{regexp.MustCompile(`(^|[\s(（\[【,，;；。])(把握|确信度|置信度)\s*[:=：]`), "confidence"},
	{regexp.MustCompile(`(?i)\bimportance\s*[:=：]?\s*\d`), "importance"},
	{regexp.MustCompile(`重要(性|度)\s*[:=：]?\s*\d`), "importance"},
	{regexp.MustCompile(`(?i)[\[【]\s*[pbe]\s*:`), "id"},
	{regexp.MustCompile(`(?i)(^|[^a-z0-9])[pbe]:[0-9a-z]{2,}`), "id"},
	{regexp.MustCompile(`(?i)\b[0-9][0-9a-hjkmnp-tv-z]{25}\b`), "id"},
	{regexp.MustCompile(`(?i)\bturn\s*=\s*\d`), "turn"},
}

// fieldIn returns the field a text carries in field-like form, or "".
// shown are the ids of the request; one long enough not to be a word counts
// as an id wherever it appears.
func fieldIn(text string, shown map[string]bool) string {
	for _, p := range fieldPatterns {
		if p.re.MatchString(text) {
			return p.field
		}
	}
	for id := range shown {
		if utf8.RuneCountInString(id) >= 8 && strings.Contains(text, id) {
			return "id"
		}
	}
	return ""
}

// checkText returns the note for a text that cannot be a belief's, or false.
func checkText(item, text string, shown map[string]bool) (Note, bool) {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return Note{Item: item, Action: Dropped, Reason: ReasonEmptyText}, true
	case utf8.RuneCountInString(t) > MaxTextRunes:
		return Note{Item: item, Action: Dropped, Reason: ReasonLongText, Detail: "limit " + itoa(MaxTextRunes)}, true
	}
	if f := fieldIn(t, shown); f != "" {
		return Note{Item: item, Action: Refused, Reason: ReasonFieldInText, Detail: f}, true
	}
	return Note{}, false
}
