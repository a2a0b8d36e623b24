package bot

import (
	"context"
	"errors"

	"troupe/memory"
	"troupe/models"
)

// builtPrompt is an assembled prompt and its token estimate.
type builtPrompt struct {
	messages  []PromptMessage
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

// prompt assembles the turn's prompt from the branch and fits it to
// context_window − max_reply_tokens (see fitPrompt). The chat's lore state
// is stored once the prompt's text is expanded.
func (p *Pipeline) prompt(ctx context.Context, st chatState, br models.Branch, rp replyPlan) (builtPrompt, bool, error) {
	tl := p.lore(ctx, st, br, rp)
	in := p.promptInput(st, br, rp, tl)
	if tl.save != nil {
		tl.save(ctx)
	}
	return p.fitPrompt(st, in)
}

// promptInput is what the turn's prompt is built from, with tl's macros
// and lore.
func (p *Pipeline) promptInput(st chatState, br models.Branch, rp replyPlan, tl turnLore) memory.AssembleInput {
	lang := p.language(st.card)
	in := memory.AssembleInput{
		Language:  lang,
		System:    systemText(st.card, lang, rp.user, rp.persona, tl.env, nil),
		History:   memory.TurnsOf(br.Uncovered),
		NameUsers: rp.group,
	}
	if len(tl.placed) > 0 || len(tl.injections) > 0 {
		in.Lore = &memory.Lore{Injections: tl.injections}
		if len(tl.placed) > 0 {
			in.Lore.System = systemText(st.card, lang, rp.user, rp.persona, tl.env, tl.placed)
		}
	}
	if dp := st.card.DepthPrompt; dp != nil {
		in.Injections = append(in.Injections, memory.Injection{Depth: dp.Depth, Role: dp.Role, Content: tl.env.Expand(dp.Prompt)})
	}
	// troupe has no text of its own after the history, so {{original}}
	// there stands for nothing.
	in.PostHistory = tl.env.Expand(st.card.PostHistoryInstructions)
	if br.Summary != nil {
		in.Summary = br.Summary.Content
	}
	if p.opt.Memory != nil && st.resident != "" {
		// No ledger or roster is kept yet, so the resident has the whole
		// envelope up to its own maximum.
		in.Resident = p.opt.Memory.FitResident(lang, st.resident, 0)
	}
	return in
}

func toPrompt(msgs []memory.Message) []PromptMessage {
	out := make([]PromptMessage, len(msgs))
	for i, m := range msgs {
		out[i] = PromptMessage{Role: Role(m.Role), Content: m.Content}
	}
	return out
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
