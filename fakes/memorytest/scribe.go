package memorytest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/text"
)

// Scribe answers memory prompts and passes every other request on.
type Scribe struct {
	mu sync.Mutex
	// Next answers requests that are not memory prompts.
	Next func(openaitest.Request) openaitest.Answer
	// Break, when set, replaces the scribe's answer for the kind
	// ("summary") with what it returns; return ok=false to answer normally.
	Break     func(kind string, n int) (openaitest.Answer, bool)
	summaries int
	counts    map[string]int
}

// Count returns how many answers of a kind ("summary", "recap",
// "consolidate", "record") the scribe wrote.
func (s *Scribe) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// Kind tells which memory prompt a request is, or "" for a chat turn.
func Kind(req openaitest.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	if isRecorder(req) {
		return "record"
	}
	sys := req.Messages[0].Content
	for _, lang := range []string{"en", "zh"} {
		if strings.Contains(sys, memory.Markers[lang][0]) {
			return "consolidate"
		}
		if strings.Contains(sys, memory.RecapHeadings[lang][0]) && strings.Contains(sys, memory.RecapHeadings[lang][4]) {
			return "recap"
		}
		h := memory.SummaryHeadings[lang]
		if strings.Contains(sys, h[0]) && strings.Contains(sys, h[4]) && strings.Contains(req.Messages[len(req.Messages)-1].Content+req.Messages[1].Content, "<conversation>") {
			return "summary"
		}
	}
	return ""
}

// Summaries counts the summaries written so far.
func (s *Scribe) Summaries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summaries
}

// Respond is an openaitest responder.
func (s *Scribe) Respond(req openaitest.Request) openaitest.Answer {
	kind := Kind(req)
	if kind == "" {
		if s.Next != nil {
			return s.Next(req)
		}
		return openaitest.DefaultResponder(req)
	}
	s.mu.Lock()
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[kind]++
	n := s.counts[kind]
	if kind == "summary" {
		s.summaries++
	}
	s.mu.Unlock()
	if s.Break != nil {
		if a, ok := s.Break(kind, n); ok {
			return a
		}
	}
	switch kind {
	case "recap":
		return openaitest.Answer{Text: Recap(req, n)}
	case "consolidate":
		return openaitest.Answer{Text: Consolidate(req)}
	case "record":
		return openaitest.Answer{Text: Recorder(req)}
	}
	return openaitest.Answer{Text: Summary(req, n)}
}

var lastLine = regexp.MustCompile(`(?s)\n([^\n]*)\n</conversation>`)
var summaryMark = regexp.MustCompile(`Summary #\d+`)

// Summary writes a valid relay summary for a summary request: it names its
// number, the last transcript line, and every summary it merged.
func Summary(req openaitest.Request, n int) string {
	user := req.Messages[1].Content
	lang := "en"
	if strings.Contains(req.Messages[0].Content, memory.SummaryHeadings["zh"][0]) {
		lang = "zh"
	}
	h := memory.SummaryHeadings[lang]
	last := ""
	if m := lastLine.FindStringSubmatch(user); m != nil {
		last = m[1]
		last = text.CutRunes(last, 60)
	}
	merged := ""
	if i := strings.Index(user, "<previous-summary>"); i >= 0 {
		merged = strings.Join(summaryMark.FindAllString(user[i:], -1), ", ")
	}
	return fmt.Sprintf("%s\nSummary #%d. Through: %s. Merged: %s.\n\n%s\n- Everyone as before.\n\n%s\n- Promise %d stands.\n\n%s\n- Fact %d.\n\n%s\nThe scene after summary #%d.",
		h[0], n, last, merged, h[1], h[2], n, h[3], n, h[4], n)
}
