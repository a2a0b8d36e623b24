package handbook

import (
	"strings"

	"troupe/text"
)

// Forget removes a chat from a handbook or resident without a model: its
// chat block goes, and so does every entry outside a chat block that
// carries its tag, whole — an entry other chats also support may hold the
// forgotten chat's words beside theirs, and no rule can tell which words
// are whose, so the next consolidation writes the others' facts again from
// their live recaps. Untagged entries (hand edits) stay.
func Forget(doc, chatID string) string {
	// A pass only takes away, and the lines it keeps keep their
	// sections, so a second pass changes nothing; forget again until
	// nothing changes all the same, as a guard for Forget's promise.
	out := forgetOnce(doc, chatID)
	for out != doc {
		doc, out = out, forgetOnce(out, chatID)
	}
	return out
}

// forgetOnce is one pass of Forget over text.
func forgetOnce(doc, chatID string) string {
	if doc == "" {
		return ""
	}
	tag := "[chat:" + chatID + "]"
	var out []string
	for _, l := range Lines(doc) {
		if l.Block == chatID {
			continue
		}
		if strings.Contains(l.Text, tag) {
			rest := l.Text
			// Removing a tag can join its neighbours into it again
			// ("[chat:[chat:c1]c1]"): remove until none is left.
			for strings.Contains(rest, tag) {
				rest = strings.ReplaceAll(rest, tag, "")
			}
			// Inside another chat's block the line is that chat's own
			// record (the engine built the block from its recap): it
			// stays, without the deleted chat's tag.
			if l.Block == "" {
				continue
			}
			// Unless what is left is a heading: kept, it would start a
			// new section ("[chat:c2]# Chat: (c2)" would open c2's block
			// and take the lines after it along on the next pass). The
			// engine never tags a heading, so no chat loses its record.
			if strings.HasPrefix(strings.TrimSpace(rest), "# ") {
				continue
			}
			l.Text = strings.TrimRight(collapseSpaces(rest), " \t")
		}
		out = append(out, l.Text)
	}
	return text.CollapseBlankLines(strings.Join(out, "\n"))
}

func collapseSpaces(s string) string {
	for strings.Contains(s, "  [chat:") {
		s = strings.ReplaceAll(s, "  [chat:", " [chat:")
	}
	return s
}
