package cards

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Card is a character definition (Tavern card V2 fields).
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
	// Language is "zh" or "en": from extensions.troupe.language, else guessed
	// from the text.
	Language string `json:"-"`
	// Avatar is an image URL platforms may show with the character's messages.
	Avatar string `json:"-"`
	// Nickname (V3) is what {{char}} becomes when it is set.
	Nickname string `json:"nickname,omitempty"`
	// DepthPrompt is SillyTavern's Character's Note
	// (extensions.depth_prompt), inserted at a depth of the history.
	DepthPrompt *DepthPrompt `json:"depth_prompt,omitempty"`
	// World names a world-info file (extensions.world) the card uses.
	World string `json:"world,omitempty"`
	// Book is the card's lorebook (character_book), if it has one.
	Book *Book `json:"-"`
}

// DepthPrompt is a note inserted Depth messages from the end of the history,
// spoken by Role ("system", "user" or "assistant").
type DepthPrompt struct {
	Prompt string `json:"prompt"`
	Depth  int    `json:"depth"`
	Role   string `json:"role"`
}

type cardFile struct {
	Spec        string          `json:"spec"`
	SpecVersion string          `json:"spec_version"`
	Data        json.RawMessage `json:"data"`
}

type cardExtensions struct {
	Book       json.RawMessage `json:"character_book"`
	Extensions struct {
		World       json.RawMessage `json:"world"`
		DepthPrompt json.RawMessage `json:"depth_prompt"`
		Troupe      struct {
			Language string `json:"language"`
			Avatar   string `json:"avatar"`
		} `json:"troupe"`
	} `json:"extensions"`
}

// Errors of card parsing.
var (
	ErrCardInvalid = errors.New("cards: invalid card")
)

// ParseCard reads a Tavern V2 (or V1, flat) card from JSON. The id is left
// empty; LoadCard sets it from the file name.
func ParseCard(data []byte) (Card, error) {
	var f cardFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Card{}, fmt.Errorf("%w: not JSON: %v", ErrCardInvalid, err)
	}
	body := data
	if f.Spec != "" {
		if !strings.HasPrefix(f.Spec, "chara_card_v") {
			return Card{}, fmt.Errorf("%w: unknown spec %q", ErrCardInvalid, f.Spec)
		}
		if len(f.Data) == 0 || string(f.Data) == "null" {
			return Card{}, fmt.Errorf("%w: spec %s without data", ErrCardInvalid, f.Spec)
		}
		body = f.Data
	}
	var c Card
	if err := json.Unmarshal(body, &c); err != nil {
		return Card{}, fmt.Errorf("%w: %v", ErrCardInvalid, err)
	}
	var ext cardExtensions
	_ = json.Unmarshal(body, &ext)
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return Card{}, fmt.Errorf("%w: name is empty", ErrCardInvalid)
	}
	if len([]rune(c.Name)) > 100 {
		return Card{}, fmt.Errorf("%w: name longer than 100 characters", ErrCardInvalid)
	}
	if len(ext.Book) > 0 && string(ext.Book) != "null" {
		b, err := ParseBook(ext.Book)
		if err != nil {
			return Card{}, fmt.Errorf("%w: character_book: %v", ErrCardInvalid, err)
		}
		c.Book = b
	}
	c.World = worldName(ext.Extensions.World)
	c.DepthPrompt = depthPrompt(ext.Extensions.DepthPrompt)
	c.Avatar = ext.Extensions.Troupe.Avatar
	switch lang := ext.Extensions.Troupe.Language; lang {
	case "zh", "en":
		c.Language = lang
	case "":
		c.Language = GuessLanguage(c.Description + c.FirstMes + c.Personality + c.Scenario)
	default:
		return Card{}, fmt.Errorf("%w: extensions.troupe.language %q is not zh or en", ErrCardInvalid, lang)
	}
	return c, nil
}

// GuessLanguage returns "zh" for text that is mostly Chinese, else "en".
func GuessLanguage(text string) string {
	han, letters := 0, 0
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
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

// LoadCard reads a card file; its id is the file name without extension,
// lower-cased.
func LoadCard(path string) (Card, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Card{}, fmt.Errorf("cards: load card: %w", err)
	}
	c, err := ParseCard(data)
	if err != nil {
		return Card{}, fmt.Errorf("%s: %w", path, err)
	}
	c.ID = CardIDFromPath(path)
	return c, nil
}

// CardIDFromPath derives a card id from a file name.
func CardIDFromPath(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return strings.ToLower(base)
}

// Greeting returns the card's opening message with macros expanded.
func (c Card) Greeting(user string) string {
	return Expand(c.FirstMes, c.MacroChar(), user)
}

// Expand replaces the macros of text outside a chat: {{char}}, {{user}},
// the clock, dice and random choices (see Env.Expand).
func Expand(text, char, user string) string {
	e := Env{Char: char, User: user, Now: time.Now(), Rand: rand.Float64}
	return e.Expand(text)
}

// Library is the set of cards troupe can play.
type Library struct {
	cards map[string]Card
	def   string
}

// NewLibrary builds a library from cards; def names the default card (by
// id or name); with a single card and no def, that card is the default.
func NewLibrary(cards []Card, def string) (*Library, error) {
	l := &Library{cards: map[string]Card{}}
	for _, c := range cards {
		if _, dup := l.cards[c.ID]; dup {
			return nil, fmt.Errorf("cards: two cards with id %q", c.ID)
		}
		l.cards[c.ID] = c
	}
	switch {
	case def != "":
		c, ok := l.Find(def)
		if !ok {
			return nil, fmt.Errorf("cards: default card %q is not in the library", def)
		}
		l.def = c.ID
	case len(cards) == 1:
		l.def = cards[0].ID
	}
	return l, nil
}

// LoadLibrary loads every *.json card in dir.
func LoadLibrary(dir, def string) (*Library, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("cards: card library: %w", err)
	}
	var cards []Card
	for _, p := range paths {
		c, err := LoadCard(p)
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	return NewLibrary(cards, def)
}

// Add puts a card in the library (replacing one with the same id).
func (l *Library) Add(c Card) { l.cards[c.ID] = c }

// Default returns the default card, if there is one.
func (l *Library) Default() (Card, bool) {
	c, ok := l.cards[l.def]
	return c, ok
}

// Get returns the card with id.
func (l *Library) Get(id string) (Card, bool) {
	c, ok := l.cards[id]
	return c, ok
}

// Find looks a card up by id or name, in any case.
func (l *Library) Find(key string) (Card, bool) {
	key = strings.TrimSpace(key)
	if c, ok := l.cards[strings.ToLower(key)]; ok {
		return c, true
	}
	for _, c := range l.cards {
		if strings.EqualFold(c.Name, key) {
			return c, true
		}
	}
	return Card{}, false
}

// List returns the cards sorted by name.
func (l *Library) List() []Card {
	out := make([]Card, 0, len(l.cards))
	for _, c := range l.cards {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
