package memory

import "strings"

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
}

// AssembleInput is everything a turn's prompt is built from.
type AssembleInput struct {
	Language string
	// System is the character part of the system message (card, persona),
	// already expanded.
	System string
	// Lore holds activated lorebook entries.
	Lore []string
	// Recall is the recalled-memory block; empty leaves it out.
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
	// PostHistory is appended as a final system message when set.
	PostHistory string
	// Scene is the speaking character's scene (see Scene), sent just
	// before the new user message(s): it changes every turn, so everything
	// before it stays a cacheable prefix.
	Scene string
}

// Assemble builds the prompt in DESIGN order: system (character, conventions,
// lore, recall), the "previously" message when there is a summary or a
// resident summary, then the live branch.
func Assemble(in AssembleInput) []Message {
	w := wordingFor(in.Language)
	var sys strings.Builder
	sys.WriteString(strings.TrimSpace(in.System))
	sys.WriteString("\n\n")
	sys.WriteString(w.conventions)
	if len(in.Lore) > 0 {
		sys.WriteString("\n\n")
		sys.WriteString(w.loreHeader)
		for _, l := range in.Lore {
			sys.WriteString("\n- ")
			sys.WriteString(strings.TrimSpace(l))
		}
	}
	if in.Recall != "" {
		sys.WriteString("\n\n")
		sys.WriteString(w.recallHeader)
		sys.WriteString("\n")
		sys.WriteString(in.Recall)
	}
	msgs := make([]Message, 0, len(in.History)+3)
	msgs = append(msgs, Message{Role: RoleSystem, Content: sys.String()})
	if p := Previously(in.Language, in.Summary, in.Resident); p != "" {
		msgs = append(msgs, Message{Role: RoleUser, Content: p})
	}
	newFrom := len(in.History)
	for newFrom > 0 && in.History[newFrom-1].Role == RoleUser {
		newFrom--
	}
	for i, t := range in.History {
		if i == newFrom && in.Scene != "" {
			msgs = append(msgs, Message{Role: RoleSystem, Content: in.Scene})
		}
		content := t.Content
		if t.Role == RoleUser && in.NameUsers && t.Name != "" {
			content = t.Name + ": " + content
		}
		// Consecutive user messages (joined while a reply was written) are
		// sent as they are: every OpenAI-compatible API accepts them.
		msgs = append(msgs, Message{Role: t.Role, Content: content})
	}
	if newFrom == len(in.History) && in.Scene != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: in.Scene})
	}
	if ph := strings.TrimSpace(in.PostHistory); ph != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: ph})
	}
	return msgs
}

// Previously renders the "previously" message: the header, the chat summary,
// then the resident summary. Empty when both are empty.
func Previously(lang, summary, resident string) string {
	var parts []string
	if s := strings.TrimSpace(summary); s != "" {
		parts = append(parts, s)
	}
	if r := strings.TrimSpace(resident); r != "" {
		parts = append(parts, r)
	}
	if len(parts) == 0 {
		return ""
	}
	return wordingFor(lang).previouslyHeader + "\n\n" + strings.Join(parts, "\n\n")
}
