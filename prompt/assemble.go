package prompt

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Roles of assembled messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one message of an assembled prompt.
type Message struct {
	Role    string
	Content string
}

// Turn is one stored message of the live branch.
type Turn struct {
	ID      string
	Role    string
	Name    string
	Content string
	// Other marks, in a scene, a reply of another cast member than the
	// one speaking now: it is sent as a user message under its Name,
	// never as the speaking character's own line.
	Other bool
	// Recalled is the recall block the speaking character was shown
	// before this message when it was new, kept (models.RecallKept): it is
	// sent again in its place, word for word, so the prompt up to the
	// new messages stays the prefix the last turn sent.
	Recalled string
	// WhisperTo, on a user line, names the character it was whispered to:
	// only that character and the writer perceived it, and it is sent
	// with a note after it saying so (by Name, to WhisperTo).
	WhisperTo string
	// Scene is the scene the speaking character was shown after Recalled
	// when this message was new, kept with it: while the turn's scene is
	// the same (KeptSceneAt) it is sent again here instead of at the end.
	Scene string
}

// AssembleInput is everything a turn's prompt is built from.
type AssembleInput struct {
	Language string
	// System is the character part of the system message (card, persona),
	// already expanded.
	System string
	// Lore is what lorebooks add; nil when nothing. It is kept apart so
	// that a prompt short of room can leave it out (FitPrompt).
	Lore *Lore
	// Scene is the scene as the speaking character knows it: its ledger
	// view and its relationships to those present (record.Ledger.View).
	// Empty leaves it out.
	Scene string
	// Recall is the character's recall block as recall.Block renders it,
	// header included; empty leaves it out.
	Recall string
	// Summary is the chat's active relay summary; empty when none.
	Summary string
	// Resident is the resident summary, already fitted to its budget.
	Resident string
	// History is the uncovered branch, oldest first, ending with the new
	// user message(s).
	History []Turn
	// NameUsers prefixes each user message with its author's name, for
	// channels where several people play.
	NameUsers bool
	// Players are the other players present, most recent speaker first:
	// a capped note on their personas stands before the history
	// (playersNote); none in a one-player chat.
	Players []Player
	// Injections go into the history at their depth: Depth messages from
	// its end (0: after the last one).
	Injections []Injection
	// PostHistory is appended as a final system message when set.
	PostHistory string
}

// Lore is what activated lorebook entries add to a prompt.
type Lore struct {
	// System replaces AssembleInput.System: the same text with the
	// entries placed around the character and its example dialogues.
	System string
	// Injections are the entries placed inside the history (at a depth,
	// the author's note block).
	Injections []Injection
}

// Injection is a message placed inside the history: a lore entry at a
// depth, the author's note block, a card's Character's Note.
type Injection struct {
	Depth   int
	Role    string
	Content string
}

// Assemble builds the prompt in DESIGN order: system (character, conventions,
// lore), the "previously" message when there is a summary or a resident
// summary, the note on the other players present, the live branch, and
// last, just before the messages new to the speaking character
// (NewMessages), what changes every turn (scene and recall), so that
// everything before it is the same prefix turn after turn.
func Assemble(in AssembleInput) []Message {
	return assemble(in, nil)
}

// assemble is Assemble; with blocks, it also lists the prompt's blocks
// there (AssembleBlocks).
func assemble(in AssembleInput, blocks *[]Block) []Message {
	w := wordingFor(in.Language)
	system, injections := in.System, in.Injections
	systemKind := BlockCharacter
	if in.Lore != nil {
		if in.Lore.System != "" {
			system, systemKind = in.Lore.System, BlockCharacterLore
		}
		injections = append(slices.Clip(injections), in.Lore.Injections...)
	}
	a := assembler{msgs: make([]Message, 0, len(in.History)+len(injections)+4), blocks: blocks}
	a.add(RoleSystem, "\n\n", part{systemKind, "", strings.TrimSpace(system)}, part{BlockConventions, "", w.conventions})
	a.add(RoleUser, "\n\n", previouslyParts(in.Language, in.Summary, in.Resident)...)
	if n := playersNote(in.Language, in.Players); n != "" {
		a.add(RoleUser, "", part{BlockPlayers, "", n})
	}
	at := injectionsAt(injections, len(in.History))
	fresh := NewMessages(in.History)
	scene, kept := endScene(in), KeptSceneAt(in.History, in.Scene)
	for i, t := range in.History {
		a.injections(at[i])
		switch {
		case i == fresh:
			a.turnBlock(w, scene, in.Recall, false)
		case i == kept:
			a.turnBlock(w, t.Scene, t.Recalled, true)
		case i < fresh:
			a.turnBlock(w, "", t.Recalled, true)
		}
		content, role := t.Content, t.Role
		if t.Role == RoleUser && in.NameUsers && t.Name != "" {
			content = t.Name + ": " + content
		}
		if t.Other {
			content, role = t.Name+": "+t.Content, RoleUser
		}
		if t.Role == RoleUser && t.WhisperTo != "" {
			content += " " + whisperMark(w, t)
		}
		kind := BlockHistory
		if i >= fresh {
			kind = BlockNew
		}
		// Consecutive user messages (joined while a reply was written) are
		// sent as they are: every OpenAI-compatible API accepts them.
		a.add(role, "", part{kind, t.ID, content})
	}
	a.injections(at[len(in.History)])
	if fresh == len(in.History) {
		a.turnBlock(w, scene, in.Recall, false)
	}
	if ph := strings.TrimSpace(in.PostHistory); ph != "" {
		a.add(RoleSystem, "", part{BlockPostHistory, "", ph})
	}
	return a.msgs
}

// assembler collects a prompt's messages and, when blocks is set, the
// blocks they are made of.
type assembler struct {
	msgs   []Message
	blocks *[]Block
}

// part is one block's text inside a message.
type part struct {
	kind, ref, text string
}

// add appends a message of the parts joined by sep; nothing without parts.
func (a *assembler) add(role, sep string, parts ...part) {
	if len(parts) == 0 {
		return
	}
	content := parts[0].text
	for _, p := range parts[1:] {
		content += sep + p.text
	}
	a.msgs = append(a.msgs, Message{Role: role, Content: content})
	if a.blocks == nil {
		return
	}
	for _, p := range parts {
		*a.blocks = append(*a.blocks, Block{Kind: p.kind, Ref: p.ref, Message: len(a.msgs) - 1, Role: role, Text: p.text})
	}
}

// injections appends the messages injectionsAt placed at one point.
func (a *assembler) injections(msgs []Message) {
	for _, m := range msgs {
		a.add(m.Role, "", part{BlockInjection, "", m.Content})
	}
}

// turnBlock appends the per-turn block — the recall block (which carries
// its own header), then the scene under its header — as one system
// message; nothing when both are empty. Kept, the block is sent again in
// this place on later turns (Turn.Recalled), with the scene while it stays
// the same (Turn.Scene); recall comes first, so that when the scene
// changes the prompt still starts with this one up to the old scene.
func (a *assembler) turnBlock(w wording, scene, recall string, kept bool) {
	var parts []part
	if r := strings.TrimSpace(recall); r != "" {
		kind := BlockRecall
		if kept {
			kind = BlockKeptRecall
		}
		parts = append(parts, part{kind, "", r})
	}
	if s := strings.TrimSpace(scene); s != "" {
		parts = append(parts, part{BlockScene, "", w.sceneHeader + "\n" + s})
	}
	a.add(RoleSystem, "\n\n", parts...)
}

// NewMessages returns where the messages new to the speaking character
// start in history: the trailing run since its own last line, of user
// messages and, in a scene, the other members' lines (Turn.Other);
// len(history) when it ends on its own line. Recall cues on them, and the
// turn's block stands just before them.
func NewMessages(history []Turn) int {
	i := len(history)
	for i > 0 && (history[i-1].Role == RoleUser || history[i-1].Other) {
		i--
	}
	return i
}

// KeptSceneAt returns where in history the scene is kept, or -1: the last
// message before the new ones (NewMessages) that keeps a scene, when that
// scene is this one word for word. The scene is then sent there, where an
// earlier prompt already sent it, and the prompt's end carries only what
// is new. A scene that changed is sent at the end, and the old one not at
// all: a prompt shows one scene, the current one.
func KeptSceneAt(history []Turn, scene string) int {
	scene = strings.TrimSpace(scene)
	if scene == "" {
		return -1
	}
	for i := NewMessages(history) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(history[i].Scene); s != "" {
			if s == scene {
				return i
			}
			return -1
		}
	}
	return -1
}

// endScene is the scene Assemble sends at the prompt's end: in.Scene
// unless the history keeps it in place.
func endScene(in AssembleInput) string {
	if KeptSceneAt(in.History, in.Scene) >= 0 {
		return ""
	}
	return in.Scene
}

// injectionsAt returns the messages to put before each of n history
// messages (and, at index n, after the last): at each place, one message per
// role — system, then user, then assistant — joining what shares it. A
// depth beyond the history puts the injection at its start.
func injectionsAt(injections []Injection, n int) map[int][]Message {
	if len(injections) == 0 {
		return nil
	}
	type slot struct {
		at   int
		role string
	}
	text := map[slot]*strings.Builder{}
	var order []slot
	for _, inj := range injections {
		c := strings.TrimSpace(inj.Content)
		if c == "" {
			continue
		}
		role := inj.Role
		if role != RoleUser && role != RoleAssistant {
			role = RoleSystem
		}
		s := slot{at: n - min(max(inj.Depth, 0), n), role: role}
		b, ok := text[s]
		if !ok {
			b = &strings.Builder{}
			text[s] = b
			order = append(order, s)
		} else {
			b.WriteString("\n")
		}
		b.WriteString(c)
	}
	rank := map[string]int{RoleSystem: 0, RoleUser: 1, RoleAssistant: 2}
	slices.SortStableFunc(order, func(x, y slot) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(rank[x.role], rank[y.role]))
	})
	out := map[int][]Message{}
	for _, s := range order {
		out[s.at] = append(out[s.at], Message{Role: s.role, Content: text[s].String()})
	}
	return out
}

// Previously renders the "previously" message: the header, the chat summary,
// then the resident summary. Empty when both are empty.
func Previously(lang, summary, resident string) string {
	parts := previouslyParts(lang, summary, resident)
	if len(parts) == 0 {
		return ""
	}
	out := parts[0].text
	for _, p := range parts[1:] {
		out += "\n\n" + p.text
	}
	return out
}

// previouslyParts are the blocks of the "previously" message, joined by a
// blank line: the header with the chat summary, then the resident summary
// (the header goes with it when there is no summary); none when both are
// empty.
func previouslyParts(lang, summary, resident string) []part {
	s, r := strings.TrimSpace(summary), strings.TrimSpace(resident)
	if s == "" && r == "" {
		return nil
	}
	header := wordingFor(lang).previouslyHeader + "\n\n"
	var parts []part
	if s != "" {
		parts = append(parts, part{BlockSummary, "", header + s})
		header = ""
	}
	if r != "" {
		parts = append(parts, part{BlockResident, "", header + r})
	}
	return parts
}

// WhisperMark is the note after a whispered line t in lang: by whom (t's
// Name), to whom (its WhisperTo), and that the others present did not hear
// it. A transcript for the scribe carries it too, so that what the scribe
// writes keeps the whisper a secret of the two.
func WhisperMark(lang string, t Turn) string {
	return whisperMark(wordingFor(lang), t)
}

// whisperMark is the note after a whispered line: by whom, to whom, and
// that the others present did not hear it.
func whisperMark(w wording, t Turn) string {
	by := t.Name
	if by == "" {
		by = "User"
	}
	return fmt.Sprintf(w.whispered, by, t.WhisperTo)
}
