package cards

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"

	"troupe/text"
)

// regexTimeout bounds one search of one regex key: a pattern that
// backtracks without end (/(a+)+$/ on a long run of a's) gives up and does
// not match, instead of holding the turn.
const regexTimeout = 50 * time.Millisecond

// matcher is one compiled key.
type matcher struct {
	// re is a /pattern/flags key, compiled as JavaScript reads it; src is
	// the key as written, which names its result in the haystack.
	re  *regexp2.Regexp
	src string
	// needs are ASCII literals the expression cannot match without (in
	// lower case when it ignores case): a cheap test before running it.
	needs    []string
	needFold bool
	// key is the literal key, lower-cased unless case-sensitive.
	key           string
	caseSensitive bool
	// whole asks for word boundaries; it is set only on the sides of key
	// that end in a word character, so CJK keys match as substrings.
	wholeLeft, wholeRight bool
	// word: the key is one whole word, found by a lookup in the text's
	// words instead of a search.
	word bool
	// pair is the key's first two runes when both are outside ASCII (a
	// Chinese name, say): the text must hold them side by side.
	pair string
	// macro is the key as written when it holds a macro ({{char}}): it is
	// expanded and compiled on each turn, with wholeWords.
	macro      string
	wholeWords bool
	// lead is the key's first word when the key starts with a whole word
	// and goes on: the text must hold that word, which rules most keys out
	// without a search.
	lead string
}

// compileKey turns a key into a matcher: /pattern/flags is a regular
// expression in JavaScript's syntax, as world-info authors write them
// (look-arounds, back references; flags i, m, s and u apply, g and y mean
// nothing here), any other key a literal. A pattern that does not compile
// is taken literally and so, like in SillyTavern, matches only its own
// text; err says why it did not compile.
func compileKey(key string, caseSensitive, wholeWords bool) (m matcher, ok bool, err error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return matcher{}, false, nil
	}
	m, err = compileText(key, caseSensitive, wholeWords)
	if strings.Contains(key, "{{") {
		m.macro, m.wholeWords = key, wholeWords
		// A macro key is compiled again once expanded; what it is before
		// says nothing.
		err = nil
	}
	return m, true, err
}

// compileText compiles a key as it reads: a regular expression or a literal.
func compileText(key string, caseSensitive, wholeWords bool) (matcher, error) {
	re, goPattern, err := keyRegexp(key)
	if re != nil {
		m := matcher{re: re, src: key}
		m.needs, m.needFold = requiredLiterals(goPattern)
		return m, nil
	}
	return compileLiteral(key, caseSensitive, wholeWords), err
}

// compileLiteral compiles a key as a literal, whatever it looks like.
func compileLiteral(key string, caseSensitive, wholeWords bool) matcher {
	m := matcher{key: key, caseSensitive: caseSensitive}
	if !caseSensitive {
		m.key = strings.ToLower(key)
	}
	if r1, n1 := utf8.DecodeRuneInString(m.key); r1 >= utf8.RuneSelf && !caseSensitive {
		if r2, n2 := utf8.DecodeRuneInString(m.key[n1:]); r2 >= utf8.RuneSelf && r2 != utf8.RuneError {
			m.pair = m.key[:n1+n2]
		}
	}
	if wholeWords {
		first, _ := utf8.DecodeRuneInString(m.key)
		last, _ := utf8.DecodeLastRuneInString(m.key)
		m.wholeLeft, m.wholeRight = isWordRune(first), isWordRune(last)
		end := strings.IndexFunc(m.key, func(r rune) bool { return !isWordRune(r) })
		m.word = m.wholeLeft && m.wholeRight && end < 0
		if m.wholeLeft && end > 0 {
			m.lead = m.key[:end]
		}
	}
	return m
}

// regexKey splits a /pattern/flags key into its pattern and flags; ok is
// false for any other key.
func regexKey(key string) (pattern, flags string, ok bool) {
	if len(key) < 3 || key[0] != '/' {
		return "", "", false
	}
	end := strings.LastIndexByte(key, '/')
	if end <= 0 {
		return "", "", false
	}
	flags = key[end+1:]
	if strings.Trim(flags, "ismguy") != "" {
		return "", "", false
	}
	return key[1:end], flags, true
}

// keyRegexp compiles a /pattern/flags key in ECMAScript mode; it returns
// nil and no error for a key that is no regular expression, and nil and why
// for one that does not compile. goPattern is the pattern with its flags
// in Go's syntax, for finding the literals a match needs.
func keyRegexp(key string) (re *regexp2.Regexp, goPattern string, err error) {
	pattern, flags, ok := regexKey(key)
	if !ok {
		return nil, "", nil
	}
	opts := regexp2.ECMAScript
	var goFlags string
	for _, f := range flags {
		switch f {
		case 'i':
			opts |= regexp2.IgnoreCase
		case 'm':
			opts |= regexp2.Multiline
		case 's':
			opts |= regexp2.Singleline
		case 'u':
			opts |= regexp2.Unicode
		}
		if strings.ContainsRune("ims", f) && !strings.ContainsRune(goFlags, f) {
			goFlags += string(f)
		}
	}
	if re, err = compileRegex(pattern, opts); err != nil {
		return nil, "", err
	}
	goPattern = pattern
	if goFlags != "" {
		goPattern = "(?" + goFlags + ")" + pattern
	}
	return re, goPattern, nil
}

// regexCache holds the compiled regex keys by pattern and options, so a key
// that many books or reloads of a book hold is compiled once (and two
// copies of a book hold the same compiled keys).
var regexCache struct {
	sync.Mutex
	m map[regexCacheKey]regexCompiled
}

type regexCacheKey struct {
	pattern string
	opts    regexp2.RegexOptions
}

type regexCompiled struct {
	re  *regexp2.Regexp
	err error
}

// maxCachedRegexes bounds regexCache; when it is full it starts again.
const maxCachedRegexes = 4096

// compileRegex compiles pattern with opts and the time limit per search,
// through regexCache.
func compileRegex(pattern string, opts regexp2.RegexOptions) (*regexp2.Regexp, error) {
	k := regexCacheKey{pattern, opts}
	regexCache.Lock()
	defer regexCache.Unlock()
	if c, ok := regexCache.m[k]; ok {
		return c.re, c.err
	}
	re, err := regexp2.Compile(pattern, opts)
	if err == nil {
		re.MatchTimeout = regexTimeout
	}
	if regexCache.m == nil || len(regexCache.m) >= maxCachedRegexes {
		regexCache.m = map[regexCacheKey]regexCompiled{}
	}
	regexCache.m[k] = regexCompiled{re, err}
	return re, err
}

// requiredLiterals returns the ASCII literals of at least two bytes that
// every match of pattern contains: the literal parts of a top-level
// concatenation. fold is true when they are to be found in any case (they
// are then lower-cased); a pattern mixing both gives none, and so does one
// Go's parser does not read (a look-around): the search then runs on every
// text.
func requiredLiterals(pattern string) (lits []string, fold bool) {
	if strings.Contains(pattern, `\u`) || strings.Contains(pattern, `\c`) {
		// Escapes that Go reads otherwise than JavaScript, or not at all.
		return nil, false
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	first := true
	for _, p := range parts {
		if p.Op != syntax.OpLiteral || len(p.Rune) < 2 {
			continue
		}
		lit := string(p.Rune)
		if !isASCII(lit) {
			continue
		}
		f := p.Flags&syntax.FoldCase != 0
		if !first && f != fold {
			return nil, false
		}
		first, fold = false, f
		if f {
			lit = strings.ToLower(lit)
		}
		lits = append(lits, lit)
	}
	return lits, fold
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
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
	// Below U+2E80 (Hangul Jamo, Thai among them) everything stays a word
	// rune, as it always has; above it Thai has no characters.
	return r < 0x2E80 || !text.IsCJK(r)
}

// haystack is scanned text with what makes searching it fast, each made
// once and only when a key needs it: its lower-case form, its words, and the
// results of the regular expressions tried on it.
type haystack struct {
	text, lower    string
	words, wordsCS map[string]struct{}
	pairs          map[string]struct{}
	regexpsTried   map[string]bool
	folded         *string
}

// foldedText is the lower-case text with the one letter whose case folding
// lower-casing misses (ſ, which (?i)s matches) folded too.
func (h *haystack) foldedText() string {
	if h.folded == nil {
		f := strings.ReplaceAll(h.lower, "ſ", "s")
		h.folded = &f
	}
	return *h.folded
}

// pairSet returns the pairs of adjacent runes of text outside ASCII.
func pairSet(text string) map[string]struct{} {
	set := map[string]struct{}{}
	prevAt := -1
	for i, r := range text {
		if r < utf8.RuneSelf {
			prevAt = -1
			continue
		}
		if prevAt >= 0 {
			set[text[prevAt:i+utf8.RuneLen(r)]] = struct{}{}
		}
		prevAt = i
	}
	return set
}

func newHaystack(text string) *haystack { return &haystack{text: text, lower: strings.ToLower(text)} }

// wordSet returns the words of text (maximal runs of word runes).
func wordSet(text string) map[string]struct{} {
	set := map[string]struct{}{}
	start := -1
	for i, r := range text {
		switch w := isWordRune(r); {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			set[text[start:i]] = struct{}{}
			start = -1
		}
	}
	if start >= 0 {
		set[text[start:]] = struct{}{}
	}
	return set
}

// match reports whether the key occurs in h.
func (m matcher) match(h *haystack) bool {
	if m.re != nil {
		if found, ok := h.regexpsTried[m.src]; ok {
			return found
		}
		found := false
		if m.literalsIn(h) {
			// A search that runs out of time finds nothing.
			found, _ = m.re.MatchString(h.text)
		}
		if h.regexpsTried == nil {
			h.regexpsTried = map[string]bool{}
		}
		h.regexpsTried[m.src] = found
		return found
	}
	if m.pair != "" {
		if h.pairs == nil {
			h.pairs = pairSet(h.lower)
		}
		if _, ok := h.pairs[m.pair]; !ok {
			return false
		}
	}
	text := h.lower
	if m.caseSensitive {
		text = h.text
	}
	if m.word || m.lead != "" {
		set := &h.words
		if m.caseSensitive {
			set = &h.wordsCS
		}
		if *set == nil {
			*set = wordSet(text)
		}
		if m.word {
			_, ok := (*set)[m.key]
			return ok
		}
		if _, ok := (*set)[m.lead]; !ok {
			return false
		}
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

// literalsIn reports whether h holds every literal the expression needs.
func (m matcher) literalsIn(h *haystack) bool {
	for _, lit := range m.needs {
		if m.needFold && !strings.Contains(h.foldedText(), lit) || !m.needFold && !strings.Contains(h.text, lit) {
			return false
		}
	}
	return true
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
	m, ok, _ := compileKey(key, caseSensitive, wholeWords)
	return ok && m.match(newHaystack(text))
}

// compile prepares every entry's matchers with the book's defaults; ParseBook
// calls it, and activation compiles on the fly an entry that was not. The
// keys that did not compile become the book's warnings.
func (b *Book) compile() {
	b.warnings = nil
	for i := range b.Entries {
		var bad []string
		b.Entries[i].primary, b.Entries[i].secondary, bad = b.Entries[i].matchers(b)
		b.warnings = append(b.warnings, bad...)
	}
}

// Warnings are what a reader of the book should know: each regex key that
// did not compile, naming its entry, and so matches only its own text.
func (b *Book) Warnings() []string {
	if b == nil {
		return nil
	}
	return b.warnings
}

// matchers compiles e's keys under b's defaults; bad says which keys did
// not compile as regular expressions, and why.
func (e *Entry) matchers(b *Book) (primary, secondary []matcher, bad []string) {
	cs, whole := b.CaseSensitive, b.MatchWholeWords
	if e.CaseSensitive != nil {
		cs = *e.CaseSensitive
	}
	if e.MatchWholeWords != nil {
		whole = *e.MatchWholeWords
	}
	add := func(to *[]matcher, k string) {
		m, ok, err := compileKey(k, cs, whole)
		if err != nil {
			bad = append(bad, fmt.Sprintf("entry %s: key %s is taken as plain text: %v", e.label(), k, err))
		}
		if ok {
			*to = append(*to, m)
		}
	}
	for _, k := range e.Keys {
		add(&primary, k)
	}
	for _, k := range e.Secondary {
		add(&secondary, k)
	}
	// Keep a non-nil slice for a keyless entry, so that activation knows
	// it was compiled.
	if primary == nil {
		primary = []matcher{}
	}
	return primary, secondary, bad
}

// label names an entry for a person: its uid, and its comment when it has
// one.
func (e *Entry) label() string {
	if c := strings.TrimSpace(e.Comment); c != "" {
		return fmt.Sprintf("%s (%q)", e.UID, c)
	}
	return e.UID
}
