package cards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"
	"unicode"

	"troupe/text"
)

// Card is a character definition: the fields of Tavern cards V1, V2 and V3
// that troupe uses, plus what it needs to write the card back out.
type Card struct {
	ID                      string   `json:"-"`
	Name                    string   `json:"name"`
	Description             string   `json:"description"`
	Personality             string   `json:"personality"`
	Scenario                string   `json:"scenario"`
	FirstMes                string   `json:"first_mes"`
	MesExample              string   `json:"mes_example"`
	CreatorNotes            string   `json:"creator_notes"`
	SystemPrompt            string   `json:"system_prompt"`
	PostHistoryInstructions string   `json:"post_history_instructions"`
	AlternateGreetings      []string `json:"alternate_greetings"`
	Tags                    []string `json:"tags"`
	Creator                 string   `json:"creator"`
	CharacterVersion        string   `json:"character_version"`
	// Nickname (V3) is what {{char}} becomes when it is set.
	Nickname string `json:"nickname,omitempty"`
	// GroupGreetings open chats with several characters: V3's
	// group_only_greetings and SillyTavern's extensions.group_greetings.
	GroupGreetings []string `json:"group_greetings,omitempty"`
	// DepthPrompt is SillyTavern's Character's Note
	// (extensions.depth_prompt), inserted at a depth of the history.
	DepthPrompt *DepthPrompt `json:"depth_prompt,omitempty"`
	// Examples are the example dialogues of MesExample, split at <START>
	// (which is never sent).
	Examples []string `json:"-"`
	// World names a world-info file (extensions.world) the card uses.
	World string `json:"world,omitempty"`
	// Language is "zh" or "en": from extensions.troupe.language, else guessed
	// from the text.
	Language string `json:"-"`
	// Avatar is an image URL platforms may show with the character's
	// messages (extensions.troupe.avatar).
	Avatar string `json:"-"`
	// Image is the card's picture (the PNG without its card chunks, or the
	// CHARX icon), at most MaxImageBytes; nil when there is none.
	Image []byte `json:"-"`
	// Book is the card's lorebook, if it has one.
	Book *Book `json:"character_book,omitempty"`
	// Format is the file the card came from: "json", "png" or "charx".
	Format string `json:"-"`
	// Spec is the card's version: "v1" (flat), "v2" or "v3".
	Spec string `json:"-"`
	// Raw is the card's data object as read; export writes its unknown
	// fields and extensions back unchanged.
	Raw json.RawMessage `json:"-"`
}

// DepthPrompt is a note inserted Depth messages from the end of the history,
// spoken by Role ("system", "user" or "assistant").
type DepthPrompt struct {
	Prompt string `json:"prompt"`
	Depth  int    `json:"depth"`
	Role   string `json:"role"`
}

// Limits on what a card may hold.
const (
	// MaxCardText bounds a card's text, lore included: beyond it every turn
	// would be spent on the card.
	MaxCardText = 2 << 20
	// MaxCardJSON bounds a card's JSON, in a file or a PNG or CHARX.
	MaxCardJSON = 8 << 20
	// MaxImageBytes bounds the avatar image kept from a PNG or CHARX.
	MaxImageBytes = 8 << 20
	// maxNameRunes bounds a card's name.
	maxNameRunes = 100
)

// Errors of card reading.
var (
	ErrCardInvalid = errors.New("cards: invalid card")
	// ErrNotCard is a file that is something else than a card (a world-info
	// file, SillyTavern's content index).
	ErrNotCard = fmt.Errorf("%w: not a card", ErrCardInvalid)
	// ErrTooLarge is a card or card file over a size limit.
	ErrTooLarge = fmt.Errorf("%w: too large", ErrCardInvalid)
)

var utf8BOM = []byte("\xEF\xBB\xBF")

// ParseCard reads a Tavern card from JSON: V1 (flat), V2 or V3. Like
// SillyTavern it takes a UTF-8 byte order mark, a number where text is
// expected (or the reverse), a single string where a list is expected and
// fractional numbers. The id is left empty; LoadCard sets it from the file
// name. Errors wrap ErrCardInvalid (ErrNotCard for JSON that is no card,
// ErrTooLarge over the size limits).
func ParseCard(data []byte) (Card, error) {
	if len(data) > MaxCardJSON {
		return Card{}, fmt.Errorf("%w: the card's JSON is %s; the limit is %s", ErrTooLarge, megabytes(len(data)), megabytes(MaxCardJSON))
	}
	data = bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(data) > 0 && data[0] == '[' && json.Valid(data) {
		return Card{}, fmt.Errorf("%w: a JSON list (SillyTavern's content index looks like this), not a card object", ErrNotCard)
	}
	top, ok := object(data)
	if !ok {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return Card{}, fmt.Errorf("%w: not JSON: %v", ErrCardInvalid, err)
		}
		kind := map[bool]string{true: "null", false: "a string, number or boolean"}[v == nil]
		return Card{}, fmt.Errorf("%w: JSON %s, not a card object", ErrNotCard, kind)
	}
	body, spec, err := cardBody(top, data)
	if err != nil {
		return Card{}, err
	}
	c, err := cardFields(body)
	if err != nil {
		return Card{}, fmt.Errorf("%w: %v", ErrCardInvalid, err)
	}
	c.Spec = spec
	c.Raw = body.raw
	if err := c.check(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// rawFields is an object with the JSON it was read from.
type rawFields struct {
	fields
	raw json.RawMessage
}

// cardBody finds the object holding the card's fields: data for V2 and V3,
// the top level for V1.
func cardBody(top fields, data []byte) (rawFields, string, error) {
	spec, err := top.str("spec")
	if err != nil {
		return rawFields{}, "", fmt.Errorf("%w: %v", ErrCardInvalid, err)
	}
	inner, hasData := object(top["data"])
	switch {
	case spec != "":
		if !strings.HasPrefix(spec, "chara_card_v") {
			return rawFields{}, "", fmt.Errorf("%w: unknown spec %q", ErrCardInvalid, spec)
		}
		if !hasData {
			return rawFields{}, "", fmt.Errorf("%w: spec %s without data", ErrCardInvalid, spec)
		}
		v := "v" + strings.TrimPrefix(spec, "chara_card_v")
		return rawFields{inner, bytes.TrimSpace(top["data"])}, v, nil
	case hasData && !top.present("name") && inner.present("name"):
		// A V2 or V3 card whose spec was lost on the way.
		v := "v2"
		if inner.present("nickname") || inner.present("group_only_greetings") || inner.present("assets") {
			v = "v3"
		}
		return rawFields{inner, bytes.TrimSpace(top["data"])}, v, nil
	case !top.present("name") && top.present("entries"):
		return rawFields{}, "", fmt.Errorf("%w: a world-info file (entries and no name); world files go in the worlds folder (troupe card import puts them there)", ErrNotCard)
	}
	return rawFields{top, data}, "v1", nil
}

// cardFields reads the card's fields from its data object.
func cardFields(body rawFields) (Card, error) {
	r := &reader{f: body.fields}
	c := Card{
		Name:                    strings.TrimSpace(r.str("name")),
		Description:             r.str("description"),
		Personality:             r.str("personality"),
		Scenario:                r.str("scenario"),
		FirstMes:                r.str("first_mes"),
		MesExample:              r.str("mes_example"),
		CreatorNotes:            r.str("creator_notes"),
		SystemPrompt:            r.str("system_prompt"),
		PostHistoryInstructions: r.str("post_history_instructions"),
		AlternateGreetings:      r.strs("alternate_greetings"),
		Tags:                    r.strs("tags"),
		Creator:                 r.str("creator"),
		CharacterVersion:        r.str("character_version"),
		Nickname:                strings.TrimSpace(r.str("nickname")),
		GroupGreetings:          r.strs("group_only_greetings"),
	}
	if r.err != nil {
		return Card{}, r.err
	}
	c.Examples = SplitExamples(c.MesExample)
	if err := c.readExtensions(body.fields); err != nil {
		return Card{}, err
	}
	if body.present("character_book") {
		book, err := ParseBook(body.fields["character_book"])
		if err != nil {
			return Card{}, fmt.Errorf("character_book: %w", err)
		}
		c.Book = book
	}
	return c, nil
}

// readExtensions reads what troupe uses of the card's extensions.
func (c *Card) readExtensions(body fields) error {
	ext, ok := object(body["extensions"])
	if !ok {
		return nil
	}
	r := &reader{f: ext}
	for _, g := range r.strs("group_greetings") {
		if !contains(c.GroupGreetings, g) {
			c.GroupGreetings = append(c.GroupGreetings, g)
		}
	}
	c.World = strings.TrimSpace(r.str("world"))
	if dp, ok := object(ext["depth_prompt"]); ok {
		d := &reader{f: dp}
		p := DepthPrompt{Prompt: d.str("prompt"), Depth: d.num("depth", 4), Role: strings.ToLower(strings.TrimSpace(d.str("role")))}
		if d.err != nil {
			return fmt.Errorf("extensions.depth_prompt.%v", d.err)
		}
		switch p.Role {
		case "":
			p.Role = "system"
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("extensions.depth_prompt.role is %q; it must be system, user or assistant", p.Role)
		}
		if p.Depth < 0 {
			p.Depth = 0
		}
		if strings.TrimSpace(p.Prompt) != "" {
			c.DepthPrompt = &p
		}
	}
	if r.err != nil {
		return fmt.Errorf("extensions.%v", r.err)
	}
	if tr, ok := object(ext["troupe"]); ok {
		t := &reader{f: tr}
		c.Avatar = strings.TrimSpace(t.str("avatar"))
		c.Language = strings.TrimSpace(t.str("language"))
		if t.err != nil {
			return fmt.Errorf("extensions.troupe.%v", t.err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check validates a parsed card and fills in its language.
func (c *Card) check() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: name is empty", ErrCardInvalid)
	case len([]rune(c.Name)) > maxNameRunes:
		return fmt.Errorf("%w: name longer than %d characters", ErrCardInvalid, maxNameRunes)
	}
	if total, lore := c.textSize(); total > MaxCardText {
		return fmt.Errorf("%w: the card holds %s of text (%s of it lore); the limit is %s", ErrTooLarge,
			megabytes(total), megabytes(lore), megabytes(MaxCardText))
	}
	switch c.Language {
	case "zh", "en":
	case "":
		c.Language = GuessLanguage(c.Description + c.FirstMes + c.Personality + c.Scenario)
	default:
		return fmt.Errorf("%w: extensions.troupe.language %q is not zh or en", ErrCardInvalid, c.Language)
	}
	return nil
}

// textSize counts the bytes of the card's text, and of its lore.
func (c *Card) textSize() (total, lore int) {
	for _, s := range []string{c.Name, c.Nickname, c.Description, c.Personality, c.Scenario, c.FirstMes, c.MesExample,
		c.CreatorNotes, c.SystemPrompt, c.PostHistoryInstructions} {
		total += len(s)
	}
	for _, list := range [][]string{c.AlternateGreetings, c.GroupGreetings, c.Tags} {
		for _, s := range list {
			total += len(s)
		}
	}
	if c.DepthPrompt != nil {
		total += len(c.DepthPrompt.Prompt)
	}
	if c.Book != nil {
		for _, e := range c.Book.Entries {
			lore += len(e.Content) + len(e.Comment)
			for _, k := range append(e.Keys, e.Secondary...) {
				lore += len(k)
			}
		}
	}
	return total + lore, lore
}

func megabytes(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KB", (n+1023)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// startRE matches a <START> line of mes_example, in any case.
var startRE = regexp.MustCompile(`(?i)<start>`)

// SplitExamples splits mes_example into its example dialogues at <START>
// markers, dropping the markers and empty dialogues.
func SplitExamples(mes string) []string {
	var out []string
	for _, part := range startRE.Split(mes, -1) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// CharName is what {{char}} stands for: the nickname when the card has one.
func (c Card) CharName() string {
	if c.Nickname != "" {
		return c.Nickname
	}
	return c.Name
}

// GuessLanguage returns "zh" for s when it is mostly Chinese, else "en".
func GuessLanguage(s string) string {
	han, letters := 0, 0
	for _, r := range s {
		switch {
		case text.IsHan(r):
			han++
		case unicode.IsLetter(r):
			letters++
		}
	}
	// A Han character carries about as much as a short word.
	if han*4 > letters {
		return "zh"
	}
	return "en"
}

// Greeting returns the card's opening message with macros expanded.
func (c Card) Greeting(user string) string {
	return Expand(c.FirstMes, c.CharName(), user)
}

// Expand replaces the macros of text outside a chat: {{char}}, {{user}},
// the clock, dice and random choices (see Env.Expand).
func Expand(text, char, user string) string {
	e := Env{Char: char, User: user, Now: time.Now(), Rand: rand.Float64}
	return e.Expand(text)
}
