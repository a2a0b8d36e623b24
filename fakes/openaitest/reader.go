package openaitest

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"troupe/text"
)

// Reader answers a chat turn like a perfectly faithful reader of its
// prompt: it knows nothing but what the request carries. The last user
// message is the question; the answer is the one sentence of the rest of
// the prompt (system, earlier turns, summaries, recall) that shares the
// most rare terms with it, or "I don't know." (我不知道。 for a question in
// Chinese) when no sentence covers at least ReaderCoverage of the
// question's weight. Whether a fact can be answered then depends only on
// whether it was put in the prompt.
//
// A message that asks nothing (it does not end with a question mark) is
// acknowledged with ReaderAck (ReaderAckZH), so that the character's replies
// do not repeat old facts after newer ones.
//
// A question carrying an out-of-character request to say a line verbatim
// (((OOC: say exactly: "…")) or （（场外：原样说出：“…”））) is answered with
// that line, as an obliging actor would.
func Reader(req Request) Answer {
	q := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			q = i
		}
	}
	if q < 0 {
		return Answer{Text: ReaderUnknown}
	}
	question := req.Messages[q].Content
	if line, ok := SayDirective(question); ok {
		return Answer{Text: line}
	}
	if !isQuestion(question) {
		return Answer{Text: ack(question)}
	}
	var context []string
	for i, m := range req.Messages {
		if i != q {
			context = append(context, m.Content)
		}
	}
	return Answer{Text: Read(context, question)}
}

// What Reader says when it has nothing to answer.
const (
	ReaderUnknown   = "I don't know."
	ReaderUnknownZH = "我不知道。"
	ReaderAck       = "I see."
	ReaderAckZH     = "我明白了。"
)

func isQuestion(s string) bool {
	s = strings.TrimRight(strings.TrimSpace(s), `"'”’）)`)
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？")
}

func ack(s string) string {
	if text.HasCJK(s) {
		return ReaderAckZH
	}
	return ReaderAck
}

// ReaderCoverage is the share of a question's term weight the best sentence
// must carry for Reader to answer with it.
const ReaderCoverage = 0.5

// Read returns the sentence of texts that best answers question, or a
// plain "I don't know" in the question's language.
func Read(texts []string, question string) string {
	var sentences []string
	for _, t := range texts {
		sentences = append(sentences, splitSentences(t)...)
	}
	qt := readerTerms(question)
	unknown := ReaderUnknown
	if text.HasCJK(question) {
		unknown = ReaderUnknownZH
	}
	if len(qt) == 0 || len(sentences) == 0 {
		return unknown
	}
	sets := make([]map[string]bool, len(sentences))
	df := map[string]int{}
	for i, s := range sentences {
		sets[i] = map[string]bool{}
		for _, t := range readerTerms(s) {
			sets[i][t] = true
			df[t]++
		}
	}
	n := float64(len(sentences))
	weight := func(t string) float64 {
		w := math.Log(1 + n/float64(1+df[t]))
		if r := []rune(t); len(r) == 1 && text.IsCJK(r[0]) {
			w /= 2 // a lone character says less than a pair
		}
		return w
	}
	total := 0.0
	for _, t := range qt {
		total += weight(t)
	}
	best, bestScore := -1, 0.0
	for i := range sentences {
		score := 0.0
		for _, t := range qt {
			if sets[i][t] {
				score += weight(t)
			}
		}
		// Ties go to the later sentence: what was said last is current.
		if score > 0 && score >= bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore < ReaderCoverage*total {
		return unknown
	}
	return sentences[best]
}

// sayDirective finds an out-of-character request to say a line verbatim.
var sayDirective = regexp.MustCompile(`(?s)(?:\(\(\s*OOC:\s*say exactly:\s*"(.+?)"\s*\)\)|（（\s*场外：\s*原样说出：\s*“(.+?)”\s*））)`)

// SayDirective returns the line an out-of-character "say exactly" request
// in text asks for.
func SayDirective(text string) (string, bool) {
	m := sayDirective.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// splitSentences cuts text at line breaks and after sentence ends (with
// any closing quotes), dropping headings and empty pieces.
func splitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := []rune(line)
		start := 0
		for i := 0; i < len(r); i++ {
			if !strings.ContainsRune(".!?。！？", r[i]) {
				continue
			}
			j := i + 1
			for j < len(r) && strings.ContainsRune(`"'”’」）)`, r[j]) {
				j++
			}
			// "3.5" and "e.g." are not sentence ends: Latin ends need a space after.
			if r[i] < 0x80 && j < len(r) && !unicode.IsSpace(r[j]) {
				continue
			}
			if s := strings.TrimSpace(string(r[start:j])); s != "" {
				out = append(out, s)
			}
			start, i = j, j-1
		}
		if s := strings.TrimSpace(string(r[start:])); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// readerStopwords are English words too common to tell sentences apart.
var readerStopwords = wordSet(`a an the is are was were be been being am do does did done doing
		what which who whom whose where when why how i me my mine myself you your yours yourself we us our
		he him his she her hers it its they them their this that these those of to in on at by for with from
		into onto about and or but not no nor so if then than there here again ever any anything something
		now please still just very can could would will shall should may might must have has had tell told
		remember know knew recall say said ask asked let us let's one ones some all too also as up out
		over after before yes ok okay oh well really`)

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// readerStopRunes are Chinese characters that carry grammar, not content:
// a run of CJK text is cut at them before it is split into bigrams.
const readerStopRunes = "的了吗呢吧啊呀么什哪谁几是在有我你他她它们这那个一和与也都就还请问过着得地把被给对让多少怎样"

// readerTerms returns the distinct content terms of s: lower-cased,
// crudely singular English words outside the stopwords, and the characters
// and character bigrams of Chinese runs cut at grammatical characters.
func readerTerms(s string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	text.Words(s, func(w string) {
		if len([]rune(w)) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') || readerStopwords[w] {
			return
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		add(w)
	}, func(run []rune) {
		// Cut at grammatical characters, then each character and pair.
		for _, part := range strings.FieldsFunc(string(run), func(r rune) bool { return strings.ContainsRune(readerStopRunes, r) }) {
			cjk := []rune(part)
			for i := range cjk {
				add(string(cjk[i]))
				if i+1 < len(cjk) {
					add(string(cjk[i : i+2]))
				}
			}
		}
	})
	return out
}
