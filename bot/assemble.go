package bot

import (
	"context"
	"errors"

	"troupe/memory"
	"troupe/models"
)

// builtPrompt is an assembled prompt and its token estimate.
type builtPrompt struct {
	messages  []memory.Message
	estimated int
	// shortened is true when recent story was left out to fit (see
	// memory.FitPrompt): the user hears it.
	shortened bool
}

// promptMargin keeps the count's error from ever overflowing the context;
// within nearLimit of the budget the prompt is counted precisely.
const (
	promptMargin = 1.05
	nearLimit    = 1.25
)

// prompt builds the turn's prompt in one call (memory.BuildPrompt) from
// the material this turn gathers, fitted to context_window −
// max_reply_tokens. The chat's lore state is stored once BuildPrompt has
// expanded the card's text. urgent is true when anything was left out for
// room: a compaction is owed now. ErrPromptTooLarge means even the message
// being answered does not fit beside the prompt's fixed parts.
//
// In a scene the prompt is the speaking member's own: its card, and only
// the messages it perceived, the other members' lines under their names.
func (p *Pipeline) prompt(ctx context.Context, cs chatState, br models.Branch, rp replyPlan) (builtPrompt, bool, error) {
	br = p.view(ctx, cs, br)
	tl := p.lore(ctx, cs, br, rp)
	m := p.material(cs, br, rp, tl)
	p.addScene(ctx, cs, rp, &m)
	if limit, ok := p.promptLimit(); ok {
		m.Keep, m.Limit = p.opt.MemoryConfig.Keep, limit
		m.Count = func(msgs []memory.Message) int { return p.countPrompt(cs.chat.ID, msgs, limit) }
	}
	pr, err := memory.BuildPrompt(m, p.budget())
	if tl.save != nil {
		// The card's text has run its macros (setvar) once expanded.
		tl.save(ctx)
	}
	if err != nil {
		return builtPrompt{}, true, ErrPromptTooLarge
	}
	if pr.Urgent {
		p.log.Warn("prompt over budget: left out older messages", "chat_id", cs.chat.ID, "dropped", pr.Dropped, "shortened", pr.Shortened, "estimate", pr.Tokens, "limit", m.Limit)
	}
	return builtPrompt{messages: pr.Messages, estimated: pr.Tokens, shortened: pr.Shortened}, pr.Urgent, nil
}

// budget is the resident summary's envelope, from the config alone.
func (p *Pipeline) budget() memory.Budget {
	return memory.ConfigFrom(p.opt.MemoryConfig, p.opt.Language).Budget()
}

// material gathers what the turn's prompt is built from, with tl's macros
// and lore: the card and persona, the lore, the summary, the resident
// summary as stored and the uncovered history ending with the new messages;
// memory expands and places them. The scene (ledger
// view, relationships) and the recall block stay empty until the recorder
// and recall feed the turn.
func (p *Pipeline) material(cs chatState, br models.Branch, rp replyPlan, tl turnLore) memory.Material {
	in := memory.AssembleInput{
		Language:  p.language(cs.card),
		History:   memory.TurnsOf(br.Uncovered),
		NameUsers: rp.group || cs.scene(),
	}
	nameLines(cs, br.Uncovered, in.History)
	if len(tl.injections) > 0 {
		in.Lore = &memory.Lore{Injections: tl.injections}
	}
	if br.Summary != nil {
		in.Summary = br.Summary.Content
	}
	m := memory.Material{AssembleInput: in, Card: &memory.CardText{Card: cs.card, Env: tl.env, User: rp.user, Persona: rp.persona, Placed: tl.placed}}
	if p.opt.Memory != nil {
		m.StoredResident = cs.resident
	}
	return m
}

// persona returns the name the character calls the author by and their
// self-description.
func (p *Pipeline) persona(ctx context.Context, in Inbound) (string, string) {
	per, ok, _ := p.lookupPersona(ctx, in)
	return personaOf(in, per, ok)
}

// lookupPersona reads in's author's persona; a failure is logged and
// counts as none.
func (p *Pipeline) lookupPersona(ctx context.Context, in Inbound) (models.Persona, bool, error) {
	per, err := p.opt.Store.Persona(ctx, in.UserKey())
	if err != nil {
		if !errors.Is(err, models.ErrNotFound) {
			p.log.Warn("load persona", "err", err)
		}
		return models.Persona{}, false, nil
	}
	return per, true, nil
}

// personaOf is the name and description in's author plays under: their
// persona's, else their platform name.
func personaOf(in Inbound, per models.Persona, ok bool) (name, description string) {
	name = in.AuthorName
	if ok && per.Name != "" {
		name = per.Name
	}
	if name == "" {
		name = "User"
	}
	if ok {
		description = per.Description
	}
	return name, description
}
