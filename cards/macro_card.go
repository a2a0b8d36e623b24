package cards

import (
	"encoding/json"
	"strings"
)

// MacroChar is what {{char}} becomes for the card: its nickname when it has
// one, else its name.
func (c Card) MacroChar() string {
	if n := strings.TrimSpace(c.Nickname); n != "" {
		return n
	}
	return c.Name
}

// worldName reads extensions.world: a name, or nothing.
func worldName(raw json.RawMessage) string {
	s, _ := (lenient{{"world": raw}}).str("world")
	return strings.TrimSpace(s)
}

// depthPrompt reads extensions.depth_prompt (the Character's Note); nil when
// it has no text. The depth defaults to SillyTavern's 4, the role to system.
func depthPrompt(raw json.RawMessage) *DepthPrompt {
	m := (lenient{{"d": raw}}).object("d")
	if m == nil {
		return nil
	}
	f := lenient{m}
	text, _ := f.str("prompt")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	dp := &DepthPrompt{Prompt: text, Depth: NoteDepth, Role: parseRole(f)}
	if d, ok := f.integer("depth"); ok && d >= 0 {
		dp.Depth = min(d, 1000)
	}
	return dp
}
