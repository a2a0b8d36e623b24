package memory

import (
	"fmt"
	"strings"

	"troupe/prompt"
	"troupe/text"
)

// scribeWording is one scribe prompt's words in one language (see
// scribePrompt): a relay summary's and a recap's differ only in these.
type scribeWording struct {
	// system is the system message, a format the job fills with its
	// headings and names.
	system string
	// omitted says how many characters of early transcript were left out
	// (%d); summary labels the summary of the earlier story (%s). Either
	// is unused when empty.
	omitted, summary string
	// previousTag names the element that quotes the job's previous answer;
	// previousNote asks the scribe to merge it in.
	previousTag, previousNote string
	// ask closes the user message.
	ask string
}

// scribeInput is what one scribe prompt is written from.
type scribeInput struct {
	system     []any  // the system format's arguments
	omitted    int    // characters of early transcript left out
	summary    string // the summary of the earlier story, if any
	attrs      string // the conversation element's attributes, each after a space
	transcript string
	previous   string // the job's previous answer, if any
	ledger     string
}

// scribeLedger is the ledger snapshot's label and what stands for an empty
// one, per language.
var scribeLedger = map[string][2]string{
	"zh": {"【账本快照】仅作参考：账本可能落后于对话，两者不一致时以对话为准。", "（空）"},
	"en": {"[Ledger snapshot] A helper only: it may lag behind the conversation; where they disagree, the conversation wins.", "(empty)"},
}

// scribePrompt builds a scribe's messages for a text written from a
// transcript (a relay summary, a recap): the system message w.system, and a
// user message with, in order, the note on omitted transcript, the earlier
// summary, the conversation, the previous answer to merge, the ledger
// snapshot and the request. What the engine did not write is defanged
// (text.Tags) or already a transcript of text.Block lines.
func scribePrompt(lang string, w scribeWording, in scribeInput) []prompt.Message {
	var user strings.Builder
	if in.omitted > 0 && w.omitted != "" {
		fmt.Fprintf(&user, w.omitted, in.omitted)
	}
	if in.summary != "" && w.summary != "" {
		fmt.Fprintf(&user, w.summary, text.Tags(in.summary))
	}
	fmt.Fprintf(&user, "<conversation%s>\n%s\n</conversation>", in.attrs, in.transcript)
	if in.previous != "" {
		fmt.Fprintf(&user, "\n\n<%s>\n%s\n</%s>\n\n%s", w.previousTag, text.Tags(in.previous), w.previousTag, w.previousNote)
	}
	l := scribeLedger[lang]
	fmt.Fprintf(&user, "\n\n%s\n%s\n\n%s", l[0], orNone(in.ledger, l[1]), w.ask)
	return []prompt.Message{{Role: prompt.RoleSystem, Content: fmt.Sprintf(w.system, in.system...)}, {Role: prompt.RoleUser, Content: user.String()}}
}
