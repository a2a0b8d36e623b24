package prompt

// The kinds of a prompt's blocks (Block.Kind).
const (
	// BlockCharacter is the card's system text with the user's persona.
	BlockCharacter = "character"
	// BlockCharacterLore is the same with lore entries placed around it.
	BlockCharacterLore = "character_lore"
	// BlockConventions is troupe's own conventions of the system message.
	BlockConventions = "conventions"
	// BlockSummary is the chat's relay summary, under the "previously"
	// header.
	BlockSummary = "summary"
	// BlockResident is the resident summary of the card in its space:
	// what its handbook carries of every chat.
	BlockResident = "resident"
	// BlockPlayers is the note on the other players present.
	BlockPlayers = "players"
	// BlockInjection is text placed inside the history: lore entries at a
	// depth, the author's note, the card's depth prompt.
	BlockInjection = "injection"
	// BlockKeptRecall is a recall block an earlier turn showed, sent again
	// where it stood.
	BlockKeptRecall = "kept_recall"
	// BlockRecall is this turn's recall block.
	BlockRecall = "recall"
	// BlockScene is the speaking character's scene: ledger view and
	// relationships.
	BlockScene = "scene"
	// BlockHistory is a message of the recent story the speaker has seen.
	BlockHistory = "history"
	// BlockNew is a message new to the speaker: what it answers.
	BlockNew = "new"
	// BlockPostHistory is the card's post-history instructions.
	BlockPostHistory = "post_history"
)

// Block is one part of an assembled prompt, in order: a message, or a
// part of one (the system message holds the character and the
// conventions; the "previously" message the summary and the resident; a
// turn's block its recall and its scene).
type Block struct {
	Kind string
	// Ref is the stored message a history block shows; "" for others.
	Ref string
	// Message is the index of the prompt message the block is part of;
	// Role is that message's role.
	Message int
	Role    string
	// Text is the block's own text, without what joins it to the other
	// blocks of its message.
	Text string
}

// AssembleBlocks is Assemble, and the blocks the messages are made of, in
// order. It costs a second list: only a prompt that is traced calls it.
func AssembleBlocks(in AssembleInput) ([]Message, []Block) {
	var blocks []Block
	msgs := assemble(in, &blocks)
	return msgs, blocks
}
