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
}

// promptMargin keeps the count's error from ever overflowing the context;
// within nearLimit of the budget the prompt is counted precisely.
const (
	promptMargin = 1.05
	nearLimit    = 1.25
)

// prompt assembles the turn's prompt from the branch. When it would not fit
// context_window − max_reply_tokens it drops the oldest uncovered beats
// (never the last keep) and reports urgent, so a compaction is queued; if
// even that does not fit it returns ErrPromptTooLarge and nothing is sent.
func (p *Pipeline) prompt(ctx context.Context, st chatState, br models.Branch, rp replyPlan) (builtPrompt, bool, error) {
	lang := p.language(st.card)
	tl := p.lore(ctx, st, br, rp)
	in := memory.AssembleInput{
		Language:   lang,
		System:     systemText(st.card, lang, rp.user, rp.persona, tl),
		History:    memory.TurnsOf(br.Uncovered),
		NameUsers:  rp.group,
		Injections: tl.injections,
	}
	if dp := st.card.DepthPrompt; dp != nil {
		in.Injections = append(in.Injections, memory.Injection{Depth: dp.Depth, Role: dp.Role, Content: tl.env.Expand(dp.Prompt)})
	}
	// troupe has no text of its own after the history, so {{original}}
	// there stands for nothing.
	in.PostHistory = tl.env.Expand(st.card.PostHistoryInstructions)
	if tl.save != nil {
		tl.save(ctx)
	}
	if br.Summary != nil {
		in.Summary = br.Summary.Content
	}
	if p.opt.Memory != nil && st.resident != "" {
		// No ledger or roster is kept yet, so the resident has the whole
		// envelope up to its own maximum.
		in.Resident = p.opt.Memory.FitResident(lang, st.resident, 0)
	}
	msgs := memory.Assemble(in)
	if p.opt.Tokens == nil || p.opt.ContextWindow <= 0 {
		return builtPrompt{messages: toPrompt(msgs)}, false, nil
	}
	budget := float64(p.opt.ContextWindow - p.opt.MaxReplyTokens)
	count := func(msgs []memory.Message) int {
		est := p.opt.Tokens.Estimate(st.chat.ID, msgs)
		if float64(est)*nearLimit > budget {
			est = max(est, p.opt.Tokens.Precise(st.chat.ID, msgs))
		}
		return est
	}
	est := count(msgs)
	urgent := false
	for float64(est)*promptMargin > budget {
		history, dropped := memory.DropOldestBeats(in.History, p.opt.MemoryConfig.Keep, 1)
		if dropped == 0 {
			break
		}
		urgent = true
		in.History = history
		msgs = memory.Assemble(in)
		est = count(msgs)
	}
	if urgent {
		p.log.Warn("prompt over budget: dropped oldest beats", "chat_id", st.chat.ID, "estimate", est, "budget", budget)
	}
	if float64(est)*promptMargin > budget {
		return builtPrompt{}, true, ErrPromptTooLarge
	}
	return builtPrompt{messages: toPrompt(msgs), estimated: est}, urgent, nil
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
