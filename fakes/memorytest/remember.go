package memorytest

import (
	"regexp"
	"strings"

	"troupe/fakes/openaitest"
)

// recapInPrompt is a recap as the consolidation prompt quotes it.
var recapInPrompt = regexp.MustCompile(`(?s)<recap chat-id="([^"]+)" chat-name="[^"]*">\n(.*?)\n</recap>`)

// Remembering answers like a Scribe, and has each consolidation's resident
// summary also carry the established facts of the recaps it merged (a
// Scribe's resident names only the chats), as a real scribe's would: the
// recap's last line, which quotes the chat's last message, tagged with its
// chat. Tests of what reaches later prompts use it.
func Remembering() func(openaitest.Request) openaitest.Answer {
	s := &Scribe{}
	return func(req openaitest.Request) openaitest.Answer {
		a := s.Respond(req)
		if Kind(req) != "consolidate" {
			return a
		}
		for _, m := range recapInPrompt.FindAllStringSubmatch(req.Messages[1].Content, -1) {
			for _, l := range strings.Split(m[2], "\n") {
				if fact, ok := strings.CutPrefix(strings.TrimSpace(l), "- It ended: "); ok {
					a.Text += "\n- Established: " + strings.ReplaceAll(fact, "[", "(") + " [chat:" + m[1] + "]"
				}
			}
		}
		return a
	}
}

// LastUser is the content of a request's last user message.
func LastUser(req openaitest.Request) string {
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	return last
}

// TB is the part of testing.TB TurnRequest uses; declaring it here keeps the
// testing package out of binaries (troupe bench) that use the scripted scribe.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// TurnRequest is the one chat request (not a memory prompt) srv got whose
// last user message contains probe; the test fails unless there is exactly
// one.
func TurnRequest(t TB, srv *openaitest.Server, probe string) openaitest.Request {
	t.Helper()
	var found []openaitest.Request
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" && Kind(r) == "" && strings.Contains(LastUser(r), probe) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d model requests end with %q, want 1", len(found), probe)
	}
	return found[0]
}

// Previously returns a request's "[Previously]" (or 【前情提要】) message, or
// "" when it has none.
func Previously(r openaitest.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" && (strings.HasPrefix(m.Content, "[Previously]") || strings.HasPrefix(m.Content, "【前情提要】")) {
			return m.Content
		}
	}
	return ""
}
