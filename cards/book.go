package cards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Position is where an activated entry goes in the prompt. The numbers are
// SillyTavern's, so world-info files and card extensions read as written.
type Position int

// Positions of lore entries.
const (
	// BeforeChar is just before the character's description.
	BeforeChar Position = 0
	// AfterChar is just after the character's description, personality
	// and scenario.
	AfterChar Position = 1
	// NoteTop and NoteBottom are the top and bottom of the author's note
	// block, a system message NoteDepth messages from the end of history.
	NoteTop    Position = 2
	NoteBottom Position = 3
	// AtDepth is its own message, Depth messages from the end of history,
	// with its Role.
	AtDepth Position = 4
	// ExamplesTop and ExamplesBottom are the top and bottom of the example
	// dialogues.
	ExamplesTop    Position = 5
	ExamplesBottom Position = 6
)

// ErrBook is a lorebook or world-info file that cannot be read.
var ErrBook = errors.New("cards: invalid lorebook")

// NoteDepth is where the author's note block goes: as in SillyTavern, four
// messages from the end of the history.
const NoteDepth = 4

// Logic says how an entry's secondary keys combine with its primary match.
type Logic int

// Secondary-key logics (SillyTavern's selectiveLogic numbers).
const (
	AndAny Logic = 0 // at least one secondary key
	NotAll Logic = 1 // not every secondary key
	NotAny Logic = 2 // no secondary key
	AndAll Logic = 3 // every secondary key
)

// Roles of depth insertions.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Book is a lorebook: a card's character_book or a world-info file.
type Book struct {
	Name string
	// ScanDepth is how many of the latest messages are searched for keys;
	// 0 means DefaultScanDepth.
	ScanDepth int
	// TokenBudget is the book's own budget as its author wrote it; troupe
	// keeps it for export but, like SillyTavern, budgets with its
	// configuration (lore.budget_percent, lore.budget_tokens).
	TokenBudget int
	// Recursive lets activated entries' text activate further entries.
	Recursive bool
	// CaseSensitive and MatchWholeWords are the book's defaults for its
	// entries; whole words are matched unless a book or entry says not to.
	CaseSensitive   bool
	MatchWholeWords bool
	Entries         []Entry
	// raw is the JSON the book was read from, written back on export.
	raw json.RawMessage
	// warnings are the keys that did not compile (Warnings).
	warnings []string
}

// Entry is one lorebook entry.
type Entry struct {
	// UID identifies the entry within its book (its uid or id, else its
	// index); per-chat timers are kept under it.
	UID     string
	Comment string
	Keys    []string
	// Secondary keys apply only when Selective, combined by Logic.
	Secondary []string
	Selective bool
	Logic     Logic
	Content   string
	Enabled   bool
	Constant  bool
	// Order places activated entries: lower first, higher nearer the end.
	Order float64
	// Priority decides what stays when the budget is short: higher stays.
	// Without one the order stands in, as in SillyTavern.
	Priority float64
	Position Position
	Depth    int
	Role     string
	// Probability (0–100) is the chance an activated entry is inserted,
	// when UseProbability.
	Probability    float64
	UseProbability bool
	// Groups are inclusion groups: of the entries of one group activated
	// together, one is inserted — the highest-priority one among those with
	// GroupOverride, else one drawn by GroupWeight.
	Groups        []string
	GroupWeight   float64
	GroupOverride bool
	// Sticky, Cooldown and Delay are in turns: an activated entry stays
	// active Sticky more turns, then cannot activate for Cooldown turns; an
	// entry with Delay activates only from turn Delay+1 of the chat.
	Sticky, Cooldown, Delay int
	// ExcludeRecursion: only the chat activates it, never another entry's
	// text. PreventRecursion: its text activates nothing.
	// DelayUntilRecursion: only another entry's text activates it.
	ExcludeRecursion, PreventRecursion, DelayUntilRecursion bool
	// ScanDepth overrides the book's when set (> 0 messages; -1 none set).
	ScanDepth int
	// CaseSensitive and MatchWholeWords override the book's when set.
	CaseSensitive   *bool
	MatchWholeWords *bool
	// CharacterFilter limits the entry to (or, with FilterExclude, keeps
	// it from) the named characters.
	CharacterFilter []string
	FilterExclude   bool
	// KnownBy (extensions.troupe.known_by) lists the characters whose
	// prompts the entry reaches; set but empty, it reaches none; nil, all.
	KnownBy []string
	// Activate and DontActivate come from the @@activate and
	// @@dont_activate decorators.
	Activate, DontActivate bool

	primary, secondary []matcher
}

// DefaultScanDepth is how many messages are searched when neither book nor
// entry says: the last two beats.
const DefaultScanDepth = 4

// MaxEntries bounds a book, so that a pasted dump cannot make every turn scan
// without end.
const MaxEntries = 5000

// ParseBook reads a lorebook: a V2/V3 character_book (an entries array with
// keys, secondary_keys, insertion_order, … and SillyTavern's fields under
// extensions) or a SillyTavern world-info file (an entries object keyed by
// uid, with key, keysecondary, order, …). Numbers written as strings,
// fractional orders and a list written as one string are read as
// SillyTavern reads them. Errors wrap ErrBook.
func ParseBook(raw []byte) (*Book, error) {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrBook, err)
	}
	f := lenient{top, top}
	if ext := f.object("extensions"); ext != nil {
		f = lenient{top, ext}
	}
	b := &Book{MatchWholeWords: true}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		b.raw = compact.Bytes()
	}
	b.Name, _ = f.str("name")
	b.ScanDepth, _ = f.integer("scan_depth", "scanDepth")
	b.TokenBudget, _ = f.integer("token_budget", "tokenBudget")
	b.Recursive, _ = f.boolean("recursive_scanning", "recursiveScanning", "recursive")
	b.CaseSensitive, _ = f.boolean("case_sensitive", "caseSensitive")
	if v, ok := f.boolean("match_whole_words", "matchWholeWords"); ok {
		b.MatchWholeWords = v
	}
	b.ScanDepth = max(0, min(b.ScanDepth, 1000))
	b.TokenBudget = max(0, b.TokenBudget)
	list, err := bookEntries(top["entries"])
	if err != nil {
		return nil, err
	}
	if len(list) > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries; at most %d are taken", ErrBook, len(list), MaxEntries)
	}
	for i, m := range list {
		e, err := parseEntry(m, i)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrBook, i, err)
		}
		b.Entries = append(b.Entries, e)
	}
	b.compile()
	return b, nil
}

// bookEntries returns the entries of either form, the object form ordered
// by uid (numerically where the keys are numbers).
func bookEntries(raw json.RawMessage) ([]map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: entries: %v", ErrBook, err)
		}
		return list, nil
	case '{':
		var byUID map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &byUID); err != nil {
			return nil, fmt.Errorf("%w: entries: %v", ErrBook, err)
		}
		keys := make([]string, 0, len(byUID))
		for k := range byUID {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, aerr := strconv.Atoi(keys[i])
			b, berr := strconv.Atoi(keys[j])
			if aerr == nil && berr == nil {
				return a < b
			}
			return keys[i] < keys[j]
		})
		list := make([]map[string]json.RawMessage, 0, len(keys))
		for _, k := range keys {
			m := byUID[k]
			if m == nil {
				continue
			}
			if _, ok := m["uid"]; !ok {
				m["uid"], _ = json.Marshal(k)
			}
			list = append(list, m)
		}
		return list, nil
	}
	return nil, fmt.Errorf("%w: entries is neither a list nor an object", ErrBook)
}

// parseEntry reads one entry; SillyTavern's extensions take precedence over
// the V2 lenient they refine (a numeric position over "before_char").
func parseEntry(m map[string]json.RawMessage, index int) (Entry, error) {
	f := lenient{m}
	if ext := f.object("extensions"); ext != nil {
		f = lenient{ext, m}
	}
	e := Entry{Enabled: true, Probability: 100, GroupWeight: 100, Depth: NoteDepth, Role: RoleSystem, ScanDepth: -1}
	e.UID, _ = f.str("uid", "id")
	if e.UID == "" {
		e.UID = strconv.Itoa(index)
	}
	e.Comment, _ = f.str("comment", "name")
	e.Keys = f.strs("keys", "key")
	e.Secondary = f.strs("secondary_keys", "keysecondary", "secondaryKeys")
	e.Content, _ = f.str("content")
	if v, ok := f.boolean("enabled"); ok {
		e.Enabled = v
	}
	if v, ok := f.boolean("disable", "disabled"); ok && v {
		e.Enabled = false
	}
	e.Constant, _ = f.boolean("constant")
	e.Selective, _ = f.boolean("selective")
	if l, ok := f.integer("selectiveLogic", "selective_logic"); ok && l >= 0 && l <= 3 {
		e.Logic = Logic(l)
	}
	if len(e.Secondary) > 0 {
		if _, set := f.raw("selective"); !set {
			// World-info files leave selective out when the logic says all.
			e.Selective = true
		}
	}
	e.Order, _ = f.num("insertion_order", "order", "insertionOrder")
	if p, ok := f.num("priority"); ok {
		e.Priority = p
	} else {
		e.Priority = e.Order
	}
	e.Position = parsePosition(f)
	if d, ok := f.integer("depth"); ok && d >= 0 {
		e.Depth = min(d, 1000)
	}
	e.Role = parseRole(f)
	if p, ok := f.num("probability"); ok {
		e.Probability = max(0, min(100, p))
	}
	if v, ok := f.boolean("useProbability", "use_probability"); ok {
		e.UseProbability = v
	} else {
		e.UseProbability = e.Probability < 100
	}
	e.Groups = f.strs("group")
	if w, ok := f.num("groupWeight", "group_weight"); ok && w >= 0 {
		e.GroupWeight = w
	}
	e.GroupOverride, _ = f.boolean("groupOverride", "group_override")
	e.Sticky = nonNegative(f.integer("sticky"))
	e.Cooldown = nonNegative(f.integer("cooldown"))
	e.Delay = nonNegative(f.integer("delay"))
	e.ExcludeRecursion, _ = f.boolean("excludeRecursion", "exclude_recursion")
	e.PreventRecursion, _ = f.boolean("preventRecursion", "prevent_recursion")
	e.DelayUntilRecursion, _ = f.boolean("delayUntilRecursion", "delay_until_recursion")
	if d, ok := f.integer("scanDepth", "scan_depth"); ok && d >= 0 {
		e.ScanDepth = min(d, 1000)
	}
	if v, ok := f.boolean("caseSensitive", "case_sensitive"); ok {
		e.CaseSensitive = &v
	}
	if v, ok := f.boolean("matchWholeWords", "match_whole_words"); ok {
		e.MatchWholeWords = &v
	}
	if cf := f.object("characterFilter", "character_filter"); cf != nil {
		cff := lenient{cf}
		e.CharacterFilter = cff.strs("names")
		e.FilterExclude, _ = cff.boolean("isExclude", "is_exclude")
	}
	if tr := f.object("troupe"); tr != nil {
		if _, set := (lenient{tr}).raw("known_by"); set {
			e.KnownBy = append([]string{}, (lenient{tr}).strs("known_by")...)
		}
	}
	e.Content = e.decorate(e.Content)
	return e, nil
}

func nonNegative(n int, ok bool) int {
	if !ok || n < 0 {
		return 0
	}
	return n
}

// parsePosition reads a position given as SillyTavern's number or as a
// name (V2's before_char/after_char, and a few spellings of the others).
func parsePosition(f lenient) Position {
	if n, ok := f.integer("position"); ok {
		if n >= int(BeforeChar) && n <= int(ExamplesBottom) {
			return Position(n)
		}
		return BeforeChar
	}
	s, _ := f.str("position")
	if p, ok := positionByName(s); ok {
		return p
	}
	return BeforeChar
}

// positionByName maps the names cards and decorators use to a position.
func positionByName(s string) (Position, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "before_char", "before_char_defs", "before_desc", "before", "wibefore":
		return BeforeChar, true
	case "after_char", "after_char_defs", "after_desc", "after", "wiafter", "personality", "scenario":
		return AfterChar, true
	case "an_top", "antop", "before_an", "author_note_top":
		return NoteTop, true
	case "an_bottom", "anbottom", "after_an", "author_note_bottom":
		return NoteBottom, true
	case "at_depth", "atdepth", "depth", "@depth", "in_chat":
		return AtDepth, true
	case "em_top", "emtop", "before_example_messages", "before_examples":
		return ExamplesTop, true
	case "em_bottom", "embottom", "after_example_messages", "after_examples":
		return ExamplesBottom, true
	}
	return BeforeChar, false
}

// parseRole reads a role as SillyTavern's number (0 system, 1 user,
// 2 assistant) or its name.
func parseRole(f lenient) string {
	if n, ok := f.integer("role"); ok {
		switch n {
		case 1:
			return RoleUser
		case 2:
			return RoleAssistant
		}
		return RoleSystem
	}
	s, _ := f.str("role")
	return roleByName(s)
}

func roleByName(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "user":
		return RoleUser
	case "assistant", "char", "model", "bot":
		return RoleAssistant
	}
	return RoleSystem
}

// decorate applies the V3 decorators at the start of text (lines beginning
// with @@) and returns the text without them. Unknown decorators are removed
// too: they are instructions for some tool, never story text.
func (e *Entry) decorate(text string) string {
	rest := text
	for {
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		if !strings.HasPrefix(trimmed, "@@") {
			break
		}
		line, after, _ := strings.Cut(trimmed, "\n")
		rest = after
		name, arg, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "@@")), " ")
		arg = strings.TrimSpace(arg)
		switch strings.ToLower(name) {
		case "depth":
			if d, err := strconv.Atoi(arg); err == nil && d >= 0 {
				e.Depth = min(d, 1000)
				e.Position = AtDepth
			}
		case "scan_depth":
			if d, err := strconv.Atoi(arg); err == nil && d >= 0 {
				e.ScanDepth = min(d, 1000)
			}
		case "role":
			e.Role = roleByName(arg)
		case "position":
			if p, ok := positionByName(arg); ok {
				e.Position = p
			}
		case "activate":
			e.Activate = true
		case "dont_activate":
			e.DontActivate = true
		}
	}
	if rest == text {
		return text
	}
	return strings.TrimLeft(rest, "\r\n")
}
