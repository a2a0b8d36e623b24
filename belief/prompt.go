package belief

import (
	"strconv"
	"strings"

	"troupe/text"
)

// Message is one chat message of a request to the model.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// The roles a request uses.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// PromptInput is what one character's reflection request shows: its name,
// its new perceptions (in turn order) and its current beliefs.
type PromptInput struct {
	Language    string
	Character   string
	Perceptions []Perception
	Beliefs     []Belief
}

// Prompt builds the reflection request: the system message explaining the
// task and the JSON answer, then the user message in the contract's shape.
func Prompt(in PromptInput) []Message {
	var b strings.Builder
	b.WriteString("<character>" + oneLine(in.Character) + "</character>\n")
	writePerceptions(&b, in.Perceptions)
	b.WriteString("<beliefs>\n")
	for _, bl := range in.Beliefs {
		writeBelief(&b, bl)
		b.WriteString("\n")
	}
	b.WriteString("</beliefs>")
	return []Message{
		{Role: RoleSystem, Content: wordingFor(in.Language).reflectSystem},
		{Role: RoleUser, Content: b.String()},
	}
}

// CheckPrompt builds one belief-check request: can this belief and these
// perceptions hold together?
func CheckPrompt(lang string, c Check) []Message {
	var b strings.Builder
	b.WriteString("<belief>")
	writeBelief(&b, c.Belief)
	b.WriteString("</belief>\n")
	writePerceptions(&b, c.Perceptions)
	return []Message{
		{Role: RoleSystem, Content: wordingFor(lang).checkSystem},
		{Role: RoleUser, Content: strings.TrimSuffix(b.String(), "\n")},
	}
}

// RepairPrompt asks once more after an answer that was not the contract:
// the original request, the rejected answer, and what was wrong with it.
// problem's text is the engine's own and quotes no story text.
func RepairPrompt(lang string, prompt []Message, answer string, problem error) []Message {
	w := wordingFor(lang)
	out := append([]Message(nil), prompt...)
	return append(out,
		Message{Role: RoleAssistant, Content: answer},
		Message{Role: RoleUser, Content: w.repairBefore + problem.Error() + w.repairAfter})
}

func writePerceptions(b *strings.Builder, ps []Perception) {
	b.WriteString("<perceptions>\n")
	for _, p := range ps {
		b.WriteString("[p:" + p.ID + " turn=" + strconv.FormatInt(p.Turn, 10) + "] " + oneLine(p.Text) + "\n")
	}
	b.WriteString("</perceptions>\n")
}

func writeBelief(b *strings.Builder, bl Belief) {
	b.WriteString("[b:" + bl.ID + " " + bl.Confidence.String() + "] " + oneLine(bl.Text))
}

// oneLine keeps a text on its prompt line and out of the prompt's own tags
// and markers (text.Line).
func oneLine(s string) string { return text.Line(s) }
