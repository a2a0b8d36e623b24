package bot

import (
	"context"
	"errors"
	"slices"

	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// builtPrompt is an assembled prompt and its token estimate.
type builtPrompt struct {
	messages  []prompt.Message
	estimated int
	// keep is the recall block to keep once the reply is stored; nil
	// when none.
	keep *keptBlock
	// shortened is true when recent story was left out to fit (see
	// prompt.FitPrompt): the user hears it.
	shortened bool
	// recall is how the turn's recall went (RecallFull…); "" without.
	recall string
	// trace is the prompt as the inspector shows it; nil when traces
	// are off.
	trace *promptTrace
}

// promptMargin keeps the count's error from ever overflowing the context;
// within nearLimit of the budget the prompt is counted precisely.
const (
	promptMargin = 1.05
	nearLimit    = 1.25
)

// prompt builds the turn's prompt in one call (prompt.Build) from
// the material this turn gathers, fitted to context_window −
// max_reply_tokens. The chat's lore state is stored once prompt.Build has
// expanded the card's text. urgent is true when anything was left out for
// room: a compaction is owed now. ErrPromptTooLarge means even the message
// being answered does not fit beside the prompt's fixed parts.
//
// In a scene the prompt is the speaking member's own: its card, and only
// the messages it perceived, the other members' lines under their names.
//
// pre holds the reads started before the branch was read (readAhead).
func (p *Pipeline) prompt(ctx context.Context, cs chatState, br models.Branch, rp replyPlan, pre aheadReads) (builtPrompt, bool, error) {
	// Recall searches the store while the rest of the prompt is read.
	rec := p.recallFor(ctx, cs, br, pre.recall)
	tl := p.lore(ctx, cs, br, rp)
	m := p.material(cs, br, rp, tl)
	m.Players = p.otherPlayers(ctx, cs, rp)
	p.addScene(cs, rp, pre.scene, &m)
	keep := p.addRecall(ctx, rec, cs, br, pre.branch, &m)
	if limit, ok := p.promptLimit(); ok {
		// Each picture the turn sends takes its share of the window.
		limit -= imagePromptTokens * len(rp.images)
		m.Keep, m.Limit = p.opt.MemoryConfig.Keep, limit
		m.Count = func(msgs []prompt.Message) int { return p.countPrompt(cs.chat.ID, msgs, limit) }
	}
	pr, err := prompt.Build(m, p.budget())
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
	out := builtPrompt{messages: pr.Messages, estimated: pr.Tokens + imagePromptTokens*len(rp.images), shortened: pr.Shortened, keep: keep.withScene(pr.EndScene)}
	if rec != nil {
		out.recall = rec.mode
	}
	out.trace = p.tracePrompt(cs, br, rp, pr, rec)
	if out.trace != nil {
		out.trace.trace.Lore = tl.fired
	}
	return out, pr.Urgent, nil
}

// branch loads the branch ending at headID as the speaking member
// perceived it: in a scene, its own summary chain and only the messages it
// was present at (one query, models.LoadView); in a one-card chat, the
// whole chat as always.
func (p *Pipeline) branch(ctx context.Context, cs chatState, headID string) (models.Branch, error) {
	if !cs.scene() {
		return p.opt.Store.LoadBranch(ctx, headID)
	}
	return p.opt.Store.LoadView(ctx, headID, cs.speakerName())
}

// aheadReads are the reads of a turn's prompt that do not need its
// branch, started before the branch is read.
type aheadReads struct {
	// recall is the search of a one-card chat's turn, cued on the messages
	// it stored (readBeside); prompt uses it when it cued on what the
	// branch shows is new to the speaker, and searches again otherwise.
	recall *pendingRecall
	// branch is a one-card chat's branch, read beside the store.
	branch *branchRead
	scene  *sceneRead
}

// readAhead starts the reads of the prompt of cs's speaking member that do
// not need its branch, so that they run while the branch is read, beside
// those rp brings from the store (readBeside). The scene is read after the
// store: it needs nothing the store writes, but read beside it as well,
// turns measured slower on two cores (troupe bench on SQLite, p99 28–29 ms
// against 24–27 ms interleaved).
func (p *Pipeline) readAhead(ctx context.Context, cs chatState, rp replyPlan) aheadReads {
	var pre aheadReads
	if rp.ahead != nil {
		pre = *rp.ahead
	}
	pre.scene = p.readScene(ctx, cs)
	return pre
}

// readBeside starts, beside the store of a one-card chat's new messages
// msgs, the reads of the reply's prompt that need not wait for them:
// recall's search, cued on msgs (they are what is new to the character
// unless earlier ones went unanswered, which recallFor checks), and the
// branch up to the chat's head as it was, with the recall blocks kept for
// its messages (readBranch). nil in a scene, where the reads depend on the
// speaker's view and on who answers.
func (p *Pipeline) readBeside(ctx context.Context, cs chatState, rt route, msgs []*models.Message) *aheadReads {
	if cs.scene() || len(rt.Speakers) != 1 {
		return nil
	}
	// Named now, the messages can be cued on before they are stored.
	for _, m := range msgs {
		if m.ID == "" {
			m.ID = models.NewID()
		}
	}
	a := &aheadReads{}
	if cs.chat.HeadID != "" {
		a.branch = p.readBranch(ctx, cs)
	}
	if p.recallOn() {
		// A copy: the store fills in the messages meanwhile.
		cued := make([]models.Message, len(msgs))
		for i, m := range msgs {
			cued[i] = *m
		}
		a.recall = p.searchRecall(ctx, cs, cs.speakerName(), msgs[len(msgs)-1].ID, cued)
	}
	return a
}

// stop abandons the reads nobody will use; nil is fine.
func (a *aheadReads) stop() {
	if a != nil {
		a.recall.stop()
	}
}

// branchRead is a one-card chat's branch up to its head before the turn's
// new messages, read beside their store (readBranch), and the recall
// blocks kept for its messages. The messages are stored as that head's
// children or not at all (ConsumeTurn checks the head), so with them it
// is the branch the reply answers on (loadBranch).
type branchRead struct {
	done    chan struct{}
	br      models.Branch
	err     error
	kept    []models.RecallKept
	keptErr error
	// keptRead is set when kept holds the read of the branch's kept
	// blocks (recall and kept blocks on).
	keptRead bool
}

// readBranch starts the read of cs's branch up to its current head, and
// then of the recall blocks kept for its messages.
func (p *Pipeline) readBranch(ctx context.Context, cs chatState) *branchRead {
	b := &branchRead{done: make(chan struct{})}
	character := cs.speakerName()
	go func() {
		defer close(b.done)
		defer p.survive("branch_read", &b.err)
		b.br, b.err = p.opt.Store.LoadBranch(ctx, cs.chat.HeadID)
		if b.err != nil || !p.recallOn() || p.opt.Recall.KeptChars <= 0 || len(b.br.Uncovered) == 0 {
			return
		}
		b.kept, b.keptErr = p.opt.Store.KeptRecalls(ctx, cs.chat.ID, character, messageIDs(b.br.Uncovered))
		b.keptRead = true
	}()
	return b
}

// loadBranch loads the branch the reply answers on: read beside the store
// (b) and completed with the messages stored, or read now.
func (p *Pipeline) loadBranch(ctx context.Context, cs chatState, rp replyPlan, b *branchRead) (models.Branch, error) {
	if b == nil {
		return p.branch(ctx, cs, rp.parent)
	}
	<-b.done
	if b.err != nil {
		return models.Branch{}, b.err
	}
	br := b.br
	br.Uncovered, br.Walk = slices.Clip(br.Uncovered), slices.Clip(br.Walk)
	for _, m := range rp.stored {
		br.Uncovered = append(br.Uncovered, *m)
		br.Walk = append(br.Walk, m.ID)
	}
	return br, nil
}

// messageIDs returns the ids of msgs, in order.
func messageIDs(msgs []models.Message) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
}

// budget is the resident summary's envelope, from the config alone.
func (p *Pipeline) budget() prompt.Budget {
	return memory.ConfigFrom(p.opt.MemoryConfig, p.opt.Language).Budget()
}

// material gathers what the turn's prompt is built from, with tl's macros
// and lore: the card and persona, the lore, the summary, the resident
// summary as stored and the uncovered history ending with the new messages;
// memory expands and places them. The scene (ledger
// view, relationships) and the recall block stay empty until the recorder
// and recall feed the turn.
func (p *Pipeline) material(cs chatState, br models.Branch, rp replyPlan, tl turnLore) prompt.Material {
	in := prompt.AssembleInput{
		Language:  p.language(cs.card),
		History:   memory.TurnsOf(br.Uncovered),
		NameUsers: rp.group || cs.scene(),
	}
	nameLines(cs, br.Uncovered, in.History)
	if len(tl.injections) > 0 {
		in.Lore = &prompt.Lore{Injections: tl.injections}
	}
	if br.Summary != nil {
		in.Summary = br.Summary.Content
	}
	m := prompt.Material{AssembleInput: in, Card: &prompt.CardText{Card: cs.card, Env: tl.env, User: rp.user, Persona: rp.persona, Placed: tl.placed}}
	if p.opt.Memory != nil {
		m.StoredResident = memory.ResidentOf(cs.resident)
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

// otherPlayers gathers the personas of the players present at the reply's
// parent besides the user it answers (rp.user): the players who spoke in
// the chat and whom the presence rows list there, the one who spoke last
// first (memory keeps the most recent few, capped). A player's presence
// carries the name they spoke under, their persona's or their display
// name, so either finds them. A direct chat has
// one player and costs no query; a group chat where only rp.user is
// present costs one. A failure is logged and leaves them out.
func (p *Pipeline) otherPlayers(ctx context.Context, cs chatState, rp replyPlan) []prompt.Player {
	if (!rp.group && !cs.scene()) || rp.parent == "" {
		return nil
	}
	present, err := p.opt.Store.PresentAt(ctx, rp.parent)
	if err != nil {
		p.log.Warn("load presence", "chat_id", cs.chat.ID, "err", err)
		return nil
	}
	others := map[string]bool{}
	for _, name := range present {
		others[name] = true
	}
	delete(others, models.FitName(rp.user, models.NameSize))
	for _, name := range cs.castNames() {
		delete(others, name)
	}
	if len(others) == 0 {
		return nil
	}
	authors, err := p.opt.Store.ChatAuthors(ctx, cs.chat.ID)
	if err != nil {
		p.log.Warn("load chat authors", "chat_id", cs.chat.ID, "err", err)
		return nil
	}
	var keys []string
	for _, a := range authors {
		keys = append(keys, cs.channel.Platform+":"+a.ID)
	}
	personas, err := p.opt.Store.Personas(ctx, keys)
	if err != nil {
		p.log.Warn("load personas", "chat_id", cs.chat.ID, "err", err)
		return nil
	}
	var out []prompt.Player
	seen := map[string]bool{}
	for _, a := range authors {
		per, ok := personas[cs.channel.Platform+":"+a.ID]
		name, desc := personaOf(Inbound{AuthorName: a.Name}, per, ok)
		name = p.apartFromCast(cs, name)
		fit := models.FitName(name, models.NameSize)
		if seen[a.ID] || !others[fit] && !others[models.FitName(a.Name, models.NameSize)] || fit == models.FitName(rp.user, models.NameSize) {
			continue
		}
		seen[a.ID] = true
		if desc != "" {
			out = append(out, prompt.Player{Name: name, Persona: desc, Shown: a.Name})
		}
	}
	return out
}
