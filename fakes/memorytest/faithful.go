package memorytest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"troupe/eval"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
)

// Faithful is a scripted scribe that writes memory the way a careful
// scribe would, so that an evaluation measures troupe rather than the
// fake: its summaries list every line of the conversation they cover (and
// keep the previous summary's), its recaps list the chat's lines as
// established facts, and its consolidations carry those facts, tagged by
// chat, into the resident summary as far as its budget allows. With
// Factless its summaries keep no facts at all (five well-formed, empty
// sections), the deliberately broken setting an evaluation must catch.
//
// Its reflections cite only the perceptions the request showed
// (FaithfulReflection), and its belief checks find every belief compatible.
//
// Chat turns go to Next (openaitest.Reader when nil); eval judge prompts are
// graded with eval.Score, as a judge following the rubric would.
type Faithful struct {
	Factless bool
	// LedgerFacts makes its summaries and recaps also keep the flags of
	// the ledger snapshot they were given, as facts: a scribe that trusts
	// its helper, so a ledger that reaches the wrong view shows.
	LedgerFacts bool
	// CrossFacts makes its consolidations also carry each changed recap's
	// newest established facts into the handbook's cross-chat part, tagged by
	// chat, as a scribe that copies rather than merges would: the same
	// fact told in several chats comes back once per chat, for a
	// reorganize to merge.
	CrossFacts bool
	Next       func(openaitest.Request) openaitest.Answer

	mu     sync.Mutex
	counts map[string]int
	// scripts are the replies Script set, by the player's line; asked how
	// often each line was answered.
	scripts map[string][]string
	asked   map[string]int
}

// Script makes the character answer a chat turn whose last user message
// is line with replies[0], the next turn for the same line (a /regen)
// with replies[1], and so on, the last reply once they run out: a model
// that writes something else when asked again.
func (f *Faithful) Script(line string, replies ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scripts == nil {
		f.scripts, f.asked = map[string][]string{}, map[string]int{}
	}
	f.scripts[strings.TrimSpace(line)] = replies
}

// scripted returns the scripted reply to req's last user message.
func (f *Faithful) scripted(req openaitest.Request) (string, bool) {
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = strings.TrimSpace(m.Content)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for line, replies := range f.scripts {
		// The prompt may name the speaker before the line.
		if len(replies) > 0 && (last == line || strings.HasSuffix(last, ": "+line)) {
			n := min(f.asked[line], len(replies)-1)
			f.asked[line]++
			return replies[n], true
		}
	}
	return "", false
}

// Count returns how many answers of a kind ("summary", "recap",
// "consolidate", "record", "reflect", "check", "judge") it wrote.
func (f *Faithful) Count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[kind]
}

// Respond is an openaitest responder.
func (f *Faithful) Respond(req openaitest.Request) openaitest.Answer {
	switch {
	case IsReflection(req):
		f.count("reflect")
		return openaitest.Answer{Text: FaithfulReflection(req)}
	case IsBeliefCheck(req):
		f.count("check")
		return openaitest.Answer{Text: compatible}
	case IsReorganize(req):
		f.count("reorganize")
		return openaitest.Answer{Text: Reorganize(req)}
	}
	kind := Kind(req)
	if kind == "" && len(req.Messages) > 1 {
		if c, reply, ok := eval.JudgeCase(req.Messages[0].Content, req.Messages[1].Content); ok {
			f.count("judge")
			verdict, pass := "VERDICT: FAIL", "VERDICT: PASS"
			if c.Lang == "zh" {
				verdict, pass = "结论：不通过", "结论：通过"
			}
			v := eval.Score(c, reply, eval.DefaultF1)
			if v.Score == 1 {
				verdict = pass
			}
			return openaitest.Answer{Text: v.Why + "\n" + verdict}
		}
	}
	if kind == "" {
		if reply, ok := f.scripted(req); ok {
			return openaitest.Answer{Text: reply}
		}
		if f.Next != nil {
			return f.Next(req)
		}
		return openaitest.Reader(req)
	}
	n := f.count(kind)
	switch kind {
	case "recap":
		return openaitest.Answer{Text: f.recap(req, n)}
	case "consolidate":
		return openaitest.Answer{Text: f.consolidate(req)}
	case "record":
		return openaitest.Answer{Text: Recorder(req)}
	}
	return openaitest.Answer{Text: f.summary(req)}
}

func (f *Faithful) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[kind]++
	return f.counts[kind]
}

var (
	conversationRe = regexp.MustCompile(`(?s)<conversation[^>]*>\n(.*?)\n</conversation>`)
	previousRe     = regexp.MustCompile(`(?s)<previous-summary>\n(.*?)\n</previous-summary>`)
	earlierRe      = regexp.MustCompile(`(?s)(?:\[Summary of the earlier story\]|【前情提要】)\n(.*?)\n\n<conversation`)
	previousRecap  = regexp.MustCompile(`(?s)<previous-recap>\n(.*?)\n</previous-recap>`)
)

// lines returns the conversation's lines worth keeping: every turn but the
// fake character's "I don't know" and "I see", flattened to one line each.
func lines(conversation string) []string {
	var out []string
	for _, turn := range strings.Split(conversation, "\n\n") {
		t := strings.Join(strings.Fields(turn), " ")
		if t == "" || strings.HasSuffix(t, openaitest.ReaderUnknown) || strings.HasSuffix(t, openaitest.ReaderUnknownZH) ||
			strings.HasSuffix(t, ": "+openaitest.ReaderAck) || strings.HasSuffix(t, openaitest.ReaderAckZH) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// section returns the "- " items of the section under heading in text.
func section(text, heading string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			in = t == heading
			continue
		}
		if in && strings.HasPrefix(t, "- ") {
			out = append(out, t)
		}
	}
	return out
}

func (f *Faithful) summary(req openaitest.Request) string {
	lang := "en"
	if strings.Contains(req.Messages[0].Content, memory.SummaryHeadings["zh"][0]) {
		lang = "zh"
	}
	h := memory.SummaryHeadings[lang]
	user := req.Messages[1].Content
	var facts []string
	if !f.Factless {
		if m := previousRe.FindStringSubmatch(user); m != nil {
			facts = section(m[1], h[3])
		}
		if m := conversationRe.FindStringSubmatch(user); m != nil {
			for _, l := range lines(m[1]) {
				facts = append(facts, "- "+l)
			}
		}
		facts = append(facts, f.ledgerFacts(user)...)
	}
	none, scene := "- (nothing kept)", "The story goes on."
	if lang == "zh" {
		none, scene = "- （未保留）", "故事继续。"
	}
	ledger := none
	if len(facts) > 0 {
		ledger = strings.Join(dedupe(facts), "\n")
	}
	return fmt.Sprintf("%s\n%s\n\n%s\n%s\n\n%s\n%s\n\n%s\n%s\n\n%s\n%s", h[0], none, h[1], none, h[2], none, h[3], ledger, h[4], scene)
}

func (f *Faithful) recap(req openaitest.Request, n int) string {
	lang := "en"
	if isZH(req) {
		lang = "zh"
	}
	h := memory.RecapHeadings[lang]
	user := req.Messages[1].Content
	var facts []string
	if m := previousRecap.FindStringSubmatch(user); m != nil {
		facts = section(m[1], h[2])
	}
	if m := earlierRe.FindStringSubmatch(user); m != nil {
		// A scene's summary is written in its lead card's language, the
		// recap in each card's: read the facts under either heading.
		for _, l := range []string{"en", "zh"} {
			facts = append(facts, section(m[1], memory.SummaryHeadings[l][3])...)
		}
	}
	if m := conversationRe.FindStringSubmatch(user); m != nil {
		for _, l := range lines(m[1]) {
			facts = append(facts, "- "+l)
		}
	}
	// The ledger's facts first: consolidation keeps a recap's first facts
	// when the resident runs out of room.
	facts = append(f.ledgerFacts(user), facts...)
	established := "- none"
	if len(facts) > 0 {
		established = strings.Join(dedupe(facts), "\n")
	}
	return fmt.Sprintf("# Chat %d\n\n%s\n- As told.\n\n%s\n- As in the chat.\n\n%s\n%s\n\n%s\n- none\n\n%s\n- none",
		n, h[0], h[1], h[2], established, h[3], h[4])
}

// residentBudget is how many characters (tags left out) the fake keeps its
// resident summaries under, below troupe's default limit of 1200.
const residentBudget = 1100

func (f *Faithful) consolidate(req openaitest.Request) string {
	text := Consolidate(req)
	lang := "en"
	if isZH(req) {
		lang = "zh"
	}
	if f.CrossFacts {
		text = crossFacts(req, text, lang)
	}
	size := utf8.RuneCountInString(handbook.StripTags(text[strings.Index(text, memory.Markers[lang][1]):]))
	var add strings.Builder
	for _, m := range recapInPrompt.FindAllStringSubmatch(req.Messages[1].Content, -1) {
		for _, fact := range section(m[2], memory.RecapHeadings[lang][2]) {
			if fact == "- none" {
				continue
			}
			line := "\n" + strings.ReplaceAll(fact, "[", "(") + " [chat:" + m[1] + "]"
			n := utf8.RuneCountInString(handbook.StripTags(line))
			if size+n > residentBudget {
				break
			}
			size += n
			add.WriteString(line)
		}
	}
	return text + add.String()
}

// crossNewest is how many of a recap's last facts CrossFacts copies.
const crossNewest = 2

// crossFacts adds each recap's newest established facts, tagged by its chat, to
// the handbook part of a consolidation answer, once each.
func crossFacts(req openaitest.Request, answer, lang string) string {
	mk := memory.Markers[lang]
	i := strings.Index(answer, mk[1])
	hb, rest := answer[:i], answer[i:]
	have := map[string]bool{}
	for _, l := range strings.Split(hb, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	add.WriteString("\n" + handbook.CrossHeadings[lang][1])
	for _, m := range recapInPrompt.FindAllStringSubmatch(req.Messages[1].Content, -1) {
		facts := section(m[2], memory.RecapHeadings[lang][2])
		// What the recap adds is at its end: the scribe copies that.
		for _, fact := range facts[max(0, len(facts)-crossNewest):] {
			line := strings.ReplaceAll(fact, "[", "(") + " [chat:" + m[1] + "]"
			if fact == "- none" || have[line] {
				continue
			}
			have[line] = true
			add.WriteString("\n" + line)
		}
	}
	return strings.TrimRight(hb, "\n") + add.String() + "\n" + rest
}

// ledgerLine is a ledger snapshot on a line of its own, as the summary
// and recap prompts attach it.
var ledgerLine = regexp.MustCompile(`(?m)^\{.*\}$`)

// ledgerFacts lists the flags of the ledger snapshot in a prompt's user
// message as facts, with LedgerFacts.
func (f *Faithful) ledgerFacts(user string) []string {
	if !f.LedgerFacts {
		return nil
	}
	var out []string
	for _, m := range ledgerLine.FindAllString(user, -1) {
		var l struct {
			Flags map[string]string `json:"flags"`
		}
		if json.Unmarshal([]byte(m), &l) != nil {
			continue
		}
		keys := make([]string, 0, len(l.Flags))
		for k := range l.Flags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, fmt.Sprintf("- %s: %s", k, l.Flags[k]))
		}
	}
	return out
}
