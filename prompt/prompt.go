package prompt

import "unicode/utf8"

// Material is everything one turn's prompt is built from, as bot gathers
// it: the assembly input (card and persona text, lore, summary, history
// ending with the new messages, scene, recall, post-history) with the
// resident summary as stored, and the limit the prompt must fit.
type Material struct {
	AssembleInput
	// Card, when set, is expanded into the system text, the lore's system
	// text, the depth prompt and the post-history instructions (see
	// Input); AssembleInput's own System and PostHistory are then ignored.
	Card *CardText
	// StoredResident is the resident summary as stored (memory.ResidentOf
	// reads it). Build renders it into what the scene leaves of the
	// envelope (RenderResident); AssembleInput.Resident is ignored.
	StoredResident StoredResident
	// Keep is how many of the last beats are never left out for room.
	Keep int
	// Count counts a prompt's tokens; Limit is what it may count. A Limit
	// of 0 or less fits nothing: the prompt is sent as assembled.
	Count func([]Message) int
	Limit int
}

// Prompt is a turn's built prompt: its messages, its token count, what was
// left out, and whether an urgent compaction is owed for it.
type Prompt struct {
	Fit
	// Urgent: older turns or optional parts were left out for room, so
	// the chat should be compacted now rather than at its period.
	Urgent bool
}

// Build builds one turn's prompt from m in one call: the resident
// summary gets what the scene (the ledger view and relationships) leaves
// of the envelope, the messages are assembled in DESIGN order (see
// Assemble), and the prompt is fitted to m.Limit (see FitPrompt). It
// returns ErrNoFit when even the bare prompt is over the limit.
func Build(m Material, b Budget) (Prompt, error) {
	in := m.Input()
	in.Resident = RenderResident(in.Language, m.StoredResident, utf8.RuneCountInString(in.Scene), b).Text
	if m.Limit <= 0 {
		msgs := Assemble(in)
		f := Fit{Messages: msgs, EndScene: endScene(in), Input: in}
		if m.Count != nil {
			f.Tokens = m.Count(msgs)
		}
		return Prompt{Fit: f}, nil
	}
	f, err := FitPrompt(in, m.Keep, m.Count, m.Limit)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Fit: f, Urgent: f.Dropped > 0 || f.Shortened}, nil
}

// Input is the assembly input of m: its card expanded (once per call: a
// card's macros may have effects) and the resident summary left as given.
func (m Material) Input() AssembleInput {
	if m.Card == nil {
		return m.AssembleInput
	}
	return expandCard(m.AssembleInput, m.Card)
}
