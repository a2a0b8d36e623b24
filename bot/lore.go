package bot

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"troupe/cards"
	"troupe/models"
	"troupe/prompt"
)

// chatLore is what a chat keeps between turns for its macros and lorebooks,
// stored as JSON: the state before and after the turn that answered Head, so
// that a regenerated reply starts from the same state as the first one.
type chatLore struct {
	Head   string   `json:"head,omitempty"`
	Before loreTurn `json:"before"`
	After  loreTurn `json:"after"`
}

// loreTurn is the state as of one turn.
type loreTurn struct {
	cards.State
	Vars map[string]string `json:"vars,omitempty"`
}

// turnLore is what macros and lore add to one turn's prompt.
type turnLore struct {
	env *cards.Env
	// placed holds the activated entries' text by position, except AtDepth.
	placed map[cards.Position][]string
	// injections are the depth entries and the author's note block.
	injections []prompt.Injection
	// save stores the chat's state once the prompt is built (setvar in the
	// card's text runs while it is); nil when there is nothing to keep.
	save func(ctx context.Context)
	// fired are the entries placed, for the prompt's trace.
	fired []models.PromptLore
}

// books are the lorebooks a turn of the card consults: its own, its world
// (extensions.world), and those the pipeline attaches to every chat.
// An entry both the card's book and its world hold goes in once.
func (p *Pipeline) books(c cards.Card) []*cards.Book {
	out, missing := p.opt.Worlds.BooksOf(c)
	if missing != "" {
		if _, told := p.missingWorlds.LoadOrStore(c.ID+"\x00"+missing, true); !told {
			p.log.Warn("card names a world that is not loaded; its lore is left out", "card_id", c.ID, "world", missing,
				"looked_in", strings.Join(p.opt.Worlds.Dirs(), ", "))
		}
	}
	return append(out, p.opt.Lore...)
}

// usesVars reports whether a card's text keeps chat variables.
func usesVars(c cards.Card) bool {
	text := c.SystemPrompt + c.Description + c.Personality + c.Scenario + c.MesExample + c.PostHistoryInstructions
	if c.DepthPrompt != nil {
		text += c.DepthPrompt.Prompt
	}
	return strings.Contains(text, "var::")
}

// lore prepares a turn's macros and lorebook entries: it reads the chat's
// state, activates the books on the uncovered messages and places what they
// call up. A failure to read or store the state is logged; the turn goes on
// without it.
func (p *Pipeline) lore(ctx context.Context, cs chatState, br models.Branch, rp replyPlan) turnLore {
	books := p.books(cs.card)
	tl := p.bareLore(cs, rp)
	env := tl.env
	recent := make([]string, len(br.Uncovered))
	for i, m := range br.Uncovered {
		recent[i] = m.Content
	}
	if n := len(br.Uncovered); n > 0 {
		env.LastMessage = br.Uncovered[n-1].Content
		for i := n - 1; i >= 0; i-- {
			if br.Uncovered[i].Role != prompt.RoleUser {
				env.Idle = env.Now.Sub(br.Uncovered[i].CreatedAt)
				break
			}
		}
	}
	if len(books) == 0 && !usesVars(cs.card) {
		return tl
	}
	saved, loaded := p.loadChatLore(ctx, cs.chat.ID)
	base := saved.After
	if saved.Head == rp.parent {
		base = saved.Before
	}
	env.Vars = maps.Clone(base.Vars)
	cur := base.State
	cur.Turn = base.Turn + 1
	res := cards.Activate(books, cards.Scan{
		Messages:  recent,
		Character: cs.card.Name,
		Budget:    p.opt.LoreConfig.Budget(p.opt.ContextWindow),
		Count:     prompt.EstimateTokens,
		Rand:      p.opt.Rand,
		Expand:    env.Expand,
		Knows:     p.loreKnows(ctx, cs, books),
	}, cur)
	for _, l := range res.Left {
		p.log.Debug("lore entry left out", "chat_id", cs.chat.ID, "book", l.Book, "entry", l.UID, "comment", l.Comment, "reason", l.Reason)
	}
	tl.placed = map[cards.Position][]string{}
	var note []string
	for _, a := range res.Entries {
		tl.fired = append(tl.fired, models.PromptLore{Book: a.Book, UID: a.Entry.UID, Comment: a.Entry.Comment, Tokens: a.Tokens})
		switch pos := a.Entry.Position; pos {
		case cards.AtDepth:
			tl.injections = append(tl.injections, prompt.Injection{Depth: a.Entry.Depth, Role: a.Entry.Role, Content: a.Content})
		case cards.NoteTop:
			note = append(note, a.Content)
		case cards.NoteBottom:
			// After every top entry, below.
		default:
			tl.placed[pos] = append(tl.placed[pos], a.Content)
		}
	}
	for _, a := range res.Entries {
		if a.Entry.Position == cards.NoteBottom {
			note = append(note, a.Content)
		}
	}
	if len(note) > 0 {
		tl.injections = append(tl.injections, prompt.Injection{Depth: cards.NoteDepth, Role: prompt.RoleSystem, Content: strings.Join(note, "\n")})
	}
	if !loaded {
		return tl
	}
	tl.save = func(ctx context.Context) {
		next := chatLore{Head: rp.parent, Before: base, After: loreTurn{State: res.State, Vars: env.Vars}}
		data, err := json.Marshal(next)
		if err != nil {
			p.log.Warn("encode chat lore", "chat_id", cs.chat.ID, "err", err)
			return
		}
		if old, _ := json.Marshal(saved); string(old) == string(data) {
			return
		}
		if err := p.opt.Store.PutChatLoreState(ctx, cs.chat.ID, string(data)); err != nil {
			p.log.Warn("store chat lore", "chat_id", cs.chat.ID, "err", err)
		}
	}
	return tl
}

// bareLore is a turn's macros without lore or chat state: what a prompt
// holds at the least, as refusing an oversize message measures it.
func (p *Pipeline) bareLore(cs chatState, rp replyPlan) turnLore {
	return turnLore{env: &cards.Env{Char: cs.card.CharName(), User: rp.user, Now: p.opt.Now(), ChatID: cs.chat.ID, Rand: p.opt.Rand}}
}

// loadChatLore reads a chat's stored state; ok is false when the database
// could not be read (the state is then not written over either).
func (p *Pipeline) loadChatLore(ctx context.Context, chatID string) (chatLore, bool) {
	var cl chatLore
	raw, err := p.opt.Store.ChatLoreState(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return cl, true
	}
	if err != nil {
		p.log.Warn("load chat lore", "chat_id", chatID, "err", err)
		return chatLore{}, false
	}
	if err := json.Unmarshal([]byte(raw), &cl); err != nil {
		// Unreadable state starts over rather than stopping every turn.
		p.log.Warn("chat lore unreadable: starting over", "chat_id", chatID, "err", err)
		return chatLore{}, true
	}
	return cl, true
}

// greeting expands a greeting (or any text outside a turn) with the
// pipeline's clock and randomness.
func (p *Pipeline) greeting(c cards.Card, text, user string) string {
	env := cards.Env{Char: c.CharName(), User: user, Now: p.opt.Now(), Rand: p.opt.Rand}
	return env.Expand(text)
}
