package memory

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"troupe/handbook"
)

// ConsolidationCheck is what a consolidation answer is validated against.
type ConsolidationCheck struct {
	Language string
	// Known are the chats that may be tagged: merged and changed, not deleted.
	Known map[string]bool
	// Deleted are the chats that must not be named.
	Deleted map[string]bool
	// PrevHandbook and PrevResident are the files the answer replaces;
	// PrevHandbookHand and PrevResidentHand their stored hand-line sets.
	PrevHandbook, PrevResident         string
	PrevHandbookHand, PrevResidentHand string
	// ResidentMax is the resident's budget: the scribe's own lines are
	// held to what the person's lines leave of it (ResidentRoom).
	ResidentMax int
}

// ConsolidationAnswer is a consolidation answer split and validated.
type ConsolidationAnswer struct {
	// Handbook is the handbook's cross-chat sections (the engine adds the
	// chat blocks); Resident the resident summary.
	Handbook, Resident string
	// Dropped are the live chats whose blocks the answer wrote in its
	// handbook and the engine dropped, in their order.
	Dropped []string
}

// AnswerError is why a scribe's answer was refused. Its message names the
// rule, the file, the line number and chat ids, never the words of the
// line: it is logged and stored (job records, the queue) where forgetting
// a chat cannot reach. The line itself goes only to the scribe, in the
// repair request.
type AnswerError struct {
	Reason string
	// line is the offending line, for the repair request only.
	line string
}

func (e *AnswerError) Error() string { return e.Reason }

// refuse makes an AnswerError about a line.
func refuse(line, format string, args ...any) *AnswerError {
	return &AnswerError{Reason: fmt.Sprintf(format, args...), line: strings.TrimSpace(line)}
}

// ParseConsolidation splits and validates a consolidation answer (see
// CheckConsolidation). It returns the handbook's cross-chat sections (the
// engine adds the chat blocks) and the resident summary, or an
// *AnswerError.
func ParseConsolidation(answer string, c ConsolidationCheck) (hb, resident string, err error) {
	a, err := CheckConsolidation(answer, c)
	return a.Handbook, a.Resident, err
}

// CheckConsolidation splits and validates a consolidation answer, or
// returns an *AnswerError.
//
// Every line the scribe writes carries a well-formed tag of a live chat,
// except the format's headings and the lines a person wrote (which must all
// be kept). Malformed or foreign tags, chat block headings, and the ids of
// deleted chats are refused wherever they appear, with one exception: a
// chat block of a live chat in the handbook, written as the engine writes
// one (the seed's format has them, and a model may echo it), is the
// engine's to write, so it is dropped and reported in Dropped rather than
// refused (dropChatBlocks). The resident summary's own lines are held to
// what the person's lines leave of the budget (ResidentRoom); the person's
// lines are never refused for length, since the injected view is cut
// instead (prompt.RenderResident).
func CheckConsolidation(answer string, c ConsolidationCheck) (ConsolidationAnswer, error) {
	var none ConsolidationAnswer
	mk := Markers[langOr(c.Language)]
	text := stripFence(answer)
	i := strings.Index(text, mk[0])
	j := -1
	if i >= 0 {
		// The markers share their "=====" ends: look for the second one
		// after the whole first, or they may overlap.
		if k := strings.Index(text[i+len(mk[0]):], mk[1]); k >= 0 {
			j = i + len(mk[0]) + k
		}
	}
	if i < 0 || j < 0 {
		return none, &AnswerError{Reason: fmt.Sprintf("the marker lines %q and %q must both be present, in that order", mk[0], mk[1])}
	}
	if strings.TrimSpace(text[:i]) != "" {
		return none, &AnswerError{Reason: fmt.Sprintf("there is text before %q", mk[0])}
	}
	hbRaw, dropped := dropChatBlocks(text[i+len(mk[0]):j], c.Known)
	rsRaw := text[j+len(mk[1]):]
	hbText, resident := strings.TrimSpace(hbRaw), strings.TrimSpace(rsRaw)
	if len(c.Known) > 0 && (hbText == "" || resident == "") {
		return none, &AnswerError{Reason: "both files must have content while chats remain"}
	}
	files := []struct {
		name, raw, prev, hand string
		blocks                bool
	}{
		{"handbook", hbRaw, handbook.CrossSections(c.PrevHandbook), c.PrevHandbookHand, true},
		{"resident summary", rsRaw, c.PrevResident, c.PrevResidentHand, false},
	}
	for _, f := range files {
		hand := handbook.HandEdits(f.prev, f.hand)
		if err := checkLines(f.name, f.raw, hand, f.blocks, c); err != nil {
			return none, err
		}
		if err := keptHandEdits(f.name, f.raw, hand); err != nil {
			return none, err
		}
	}
	hand := handbook.HandEdits(c.PrevResident, c.PrevResidentHand)
	if n, room := scribeChars(resident, hand), ResidentRoom(c.ResidentMax, hand); c.ResidentMax > 0 && n > room {
		return none, &AnswerError{Reason: fmt.Sprintf("the lines you wrote in the resident summary have %d characters without tags; they must have at most %d (the lines a person wrote do not count)", n, room)}
	}
	return ConsolidationAnswer{Handbook: hbText, Resident: resident, Dropped: dropped}, nil
}

// scribeChars counts the characters, tags left out, of a resident's lines
// that are not the person's lines hand.
func scribeChars(resident string, hand []string) int {
	isHand := map[string]bool{}
	for _, h := range hand {
		isHand[h] = true
	}
	var own []string
	for _, l := range strings.Split(resident, "\n") {
		if !isHand[strings.TrimSpace(l)] {
			own = append(own, l)
		}
	}
	return utf8.RuneCountInString(handbook.StripTags(strings.Join(own, "\n")))
}

// chatHeadingRe matches any heading that looks like a chat block's, at any
// level, in either language and either kind of brackets: "## chat: … (id)".
var chatHeadingRe = regexp.MustCompile(`(?i)^#{1,6}\s*(?:chat|局)\s*[:：].*[(（]\s*([A-Za-z0-9_.:-]+)\s*[)）]\s*$`)

// bracketTagRe matches what a tag in square brackets looks like when it is
// not written [chat:<id>]: "[Chat:id]", "[chat: id]", "[chat:a,b]",
// "[chat id]", "【局：id】". Well-formed tags are removed before it is
// applied; "[chatter]" and "【局势】" are words, not tags.
var bracketTagRe = regexp.MustCompile(`(?i)[\[【]\s*(?:chats?\s*(?:[:：\]】,]|\s)|局\s*[:：])`)

// parenTagRe matches a tag in parentheses, "(chat id)" or "（局：id）": with
// its colon, or naming a chat, it is a tag; "(chat room)" is prose.
var parenTagRe = regexp.MustCompile(`(?i)[(（]\s*(?:chat|局)\s*([:：]?)\s*([A-Za-z0-9_.:-]+)\s*[)）]`)

// sourceLineRe matches the line that ends a chat block, as the engine
// writes it ("Source: chat c1", "来源：局 c1") or as the seed does
// ("来源：局/c1.md").
var sourceLineRe = regexp.MustCompile(`(?i)^(?:source\s*[:：]\s*chats?|来源\s*[:：]\s*局)\s*[/ ]?\s*([A-Za-z0-9_.:-]+?)(?:\.md)?\s*$`)

// dropChatBlocks blanks out the chat blocks a handbook answer wrote, which
// are the engine's to build from the recaps, and returns the ids of their
// chats. Only what is clearly a chat block goes: a top-level heading
// exactly in the engine's form, "# Chat: <name> (<id>)" or "# 局：<名>（<id>）",
// naming a live chat, and the lines after it up to its source line or the
// next top-level heading. A chat heading in any other form, or of a deleted
// or unknown chat, stays for checkLines to refuse. Lines are blanked, not
// removed, so that line numbers in a refusal still count from the marker.
func dropChatBlocks(raw string, known map[string]bool) (string, []string) {
	lines := strings.Split(raw, "\n")
	var dropped []string
	in := ""
	for n, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "# ") {
			in = ""
			if id := handbook.BlockID(t); id != "" && known[id] {
				in = id
				dropped = append(dropped, id)
			}
		}
		if in == "" {
			continue
		}
		lines[n] = ""
		if m := sourceLineRe.FindStringSubmatch(t); m != nil && m[1] == in {
			in = ""
		}
	}
	return strings.Join(lines, "\n"), dropped
}

// checkLines applies the line rules to one file of the answer. Lines are
// numbered from the file's marker line, which is line 0.
func checkLines(file, raw string, hand []string, isHandbook bool, c ConsolidationCheck) error {
	isHand := map[string]bool{}
	for _, h := range hand {
		isHand[h] = true
	}
	for n, line := range strings.Split(raw, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || isHand[t] {
			continue
		}
		if strings.HasPrefix(t, "#") {
			if err := checkHeading(file, n, t, isHandbook, c); err != nil {
				return err
			}
			continue
		}
		if err := checkEntry(file, n, t, c); err != nil {
			return err
		}
	}
	return nil
}

func checkHeading(file string, n int, t string, isHandbook bool, c ConsolidationCheck) error {
	if m := chatHeadingRe.FindStringSubmatch(t); m != nil {
		id := m[1]
		switch {
		case c.Deleted[id]:
			return refuse(t, "%s line %d is a heading of the deleted chat %s; nothing of a deleted chat may remain", file, n, id)
		case isHandbook:
			return refuse(t, "%s line %d is a chat block heading; the engine writes each chat's block from its recap, so write only the cross-chat sections", file, n)
		default:
			return refuse(t, "%s line %d is a chat block heading; the resident summary has none", file, n)
		}
	}
	for _, lang := range []string{"en", "zh"} {
		cross, res := handbook.CrossHeadings[lang], handbook.ResidentHeadings[lang]
		allowed := res[:]
		if isHandbook {
			allowed = cross[:]
		}
		for _, h := range allowed {
			if handbook.HeadingMatches(t, h) {
				return nil
			}
		}
	}
	return refuse(t, "%s line %d is a heading the format does not have; use only the headings the instructions give", file, n)
}

func checkEntry(file string, n int, t string, c ConsolidationCheck) error {
	ids := handbook.Tags(t)
	rest := handbook.DropTags(t)
	if foreignTag(rest, c) {
		return refuse(t, "%s line %d has a malformed tag; a tag is written exactly [chat:<id>] with the id of a chat", file, n)
	}
	for _, id := range ids {
		if c.Deleted[id] {
			return refuse(t, "%s line %d is tagged with the deleted chat %s; drop the entry if only that chat supports it, else drop that tag", file, n, id)
		}
		if !c.Known[id] {
			return refuse(t, "%s line %d has a tag naming no chat of this card; tag only the chats listed in <chats>", file, n)
		}
	}
	for id := range c.Deleted {
		if hasToken(rest, id) {
			return refuse(t, "%s line %d names the deleted chat %s; nothing of a deleted chat may remain", file, n, id)
		}
	}
	if len(ids) == 0 {
		return refuse(t, "%s line %d has no [chat:<id>] tag; every line you write ends with a tag for each chat that supports it (only the lines a person wrote have none)", file, n)
	}
	return nil
}

// foreignTag reports whether a line, its well-formed tags removed, still
// has something written as a tag.
func foreignTag(rest string, c ConsolidationCheck) bool {
	if bracketTagRe.MatchString(rest) {
		return true
	}
	for _, m := range parenTagRe.FindAllStringSubmatch(rest, -1) {
		if m[1] != "" || c.Known[m[2]] || c.Deleted[m[2]] {
			return true
		}
	}
	return false
}

// keptHandEdits checks that every line a person wrote is still in the file.
func keptHandEdits(file, raw string, hand []string) error {
	have := map[string]bool{}
	for _, l := range strings.Split(raw, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, h := range hand {
		if !have[h] {
			return refuse(h, "the %s lost a line a person wrote by hand; keep every untagged line of the previous %s exactly", file, file)
		}
	}
	return nil
}

// hasToken reports whether s contains tok not inside a longer word.
func hasToken(s, tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], tok)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(tok)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// repairQuote is the line an answer was refused for, to quote back to the
// scribe, or "".
func repairQuote(err error) string {
	if e, ok := err.(*AnswerError); ok {
		return e.line
	}
	return ""
}
