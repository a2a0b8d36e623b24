package cards

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher is one compiled key.
type matcher struct {
	re *regexp.Regexp
	// key is the literal key, lower-cased unless case-sensitive.
	key           string
	caseSensitive bool
	// whole asks for word boundaries; it is set only on the sides of key
	// that end in a word character, so CJK keys match as substrings.
	wholeLeft, wholeRight bool
}

// compileKey turns a key into a matcher: /pattern/flags is a regular
// expression (flags i, s and m apply; g, u and y mean nothing here), any
// other key a literal. A pattern Go cannot compile (look-arounds, back
// references) is taken literally and so, like in SillyTavern, matches only
// its own text.
func compileKey(key string, caseSensitive, wholeWords bool) (matcher, bool) {
	key = strings.TrimSpace(key)
	if key == "" {
		return matcher{}, false
	}
	if re := keyRegexp(key); re != nil {
		return matcher{re: re}, true
	}
	m := matcher{key: key, caseSensitive: caseSensitive}
	if !caseSensitive {
		m.key = strings.ToLower(key)
	}
	if wholeWords {
		first, _ := utf8.DecodeRuneInString(m.key)
		last, _ := utf8.DecodeLastRuneInString(m.key)
		m.wholeLeft, m.wholeRight = isWordRune(first), isWordRune(last)
	}
	return m, true
}

// keyRegexp compiles a /pattern/flags key, or returns nil.
func keyRegexp(key string) *regexp.Regexp {
	if len(key) < 3 || key[0] != '/' {
		return nil
	}
	end := strings.LastIndexByte(key, '/')
	if end <= 0 {
		return nil
	}
	pattern, flags := key[1:end], key[end+1:]
	var goFlags string
	for _, f := range flags {
		switch f {
		case 'i', 's', 'm':
			if !strings.ContainsRune(goFlags, f) {
				goFlags += string(f)
			}
		case 'g', 'u', 'y':
		default:
			return nil
		}
	}
	if goFlags != "" {
		pattern = "(?" + goFlags + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	return re
}

// isWordRune reports whether r is part of a word for whole-word matching:
// letters, digits and underscore of scripts written with spaces. Chinese,
// Japanese, Korean and Thai characters are not, so keys in them match inside
// running text.
func isWordRune(r rune) bool {
	if r == '_' {
		return true
	}
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return false
	}
	if r < 0x2E80 {
		return true
	}
	return !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
}

// haystack is scanned text with its lower-case form made once.
type haystack struct {
	text, lower string
}

func newHaystack(text string) haystack { return haystack{text: text, lower: strings.ToLower(text)} }

// match reports whether the key occurs in h.
func (m matcher) match(h haystack) bool {
	if m.re != nil {
		return m.re.MatchString(h.text)
	}
	text := h.lower
	if m.caseSensitive {
		text = h.text
	}
	if !m.wholeLeft && !m.wholeRight {
		return strings.Contains(text, m.key)
	}
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], m.key)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(m.key)
		if m.boundary(text, start, end) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		from = start + max(size, 1)
	}
	return false
}

// boundary reports whether text[start:end] stands as a whole word.
func (m matcher) boundary(text string, start, end int) bool {
	if m.wholeLeft && start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); isWordRune(r) {
			return false
		}
	}
	if m.wholeRight && end < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[end:]); isWordRune(r) {
			return false
		}
	}
	return true
}

// MatchKey reports whether key calls up an entry in text, with the book
// defaults troupe uses (whole words, any case) unless told otherwise.
func MatchKey(key, text string, caseSensitive, wholeWords bool) bool {
	m, ok := compileKey(key, caseSensitive, wholeWords)
	return ok && m.match(newHaystack(text))
}

// compile prepares every entry's matchers with the book's defaults; ParseBook
// calls it, and activation compiles on the fly an entry that was not.
func (b *Book) compile() {
	for i := range b.Entries {
		b.Entries[i].primary, b.Entries[i].secondary = b.Entries[i].matchers(b)
	}
}

// matchers compiles e's keys under b's defaults.
func (e *Entry) matchers(b *Book) (primary, secondary []matcher) {
	cs, whole := b.CaseSensitive, b.MatchWholeWords
	if e.CaseSensitive != nil {
		cs = *e.CaseSensitive
	}
	if e.MatchWholeWords != nil {
		whole = *e.MatchWholeWords
	}
	for _, k := range e.Keys {
		if m, ok := compileKey(k, cs, whole); ok {
			primary = append(primary, m)
		}
	}
	for _, k := range e.Secondary {
		if m, ok := compileKey(k, cs, whole); ok {
			secondary = append(secondary, m)
		}
	}
	// Keep a non-nil slice for a keyless entry, so that activation knows
	// it was compiled.
	if primary == nil {
		primary = []matcher{}
	}
	return primary, secondary
}
