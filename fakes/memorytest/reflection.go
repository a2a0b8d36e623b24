package memorytest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"troupe/fakes/openaitest"
)

// RecorderPerceiving is Recorder with a perception of every event for the
// first cast member ("… sees …"), so reflection has something to work on.
func RecorderPerceiving(req openaitest.Request) string {
	evs, cast := RecorderEvents(req), RecorderCast(req)
	var a map[string]any
	if err := json.Unmarshal([]byte(Recorder(req)), &a); err != nil || len(evs) == 0 || len(cast) == 0 {
		return "{}"
	}
	var ps []map[string]any
	for _, e := range evs {
		ps = append(ps, map[string]any{"character": cast[0], "event": e.ID, "mode": "saw",
			"text": cast[0] + " sees the visitor climb the lighthouse stair.", "importance": 5})
	}
	a["perceptions"] = ps
	b, _ := json.Marshal(a)
	return string(b)
}

var reflectPerception = regexp.MustCompile(`\[p:(\S+) turn=`)

// IsReflection and IsBeliefCheck tell reflection's two requests apart by
// their user message (DESIGN.md's contract).
func IsReflection(req openaitest.Request) bool {
	return len(req.Messages) > 1 && strings.HasPrefix(req.Messages[1].Content, "<character>")
}

// IsBeliefCheck reports a belief-check request.
func IsBeliefCheck(req openaitest.Request) bool {
	return len(req.Messages) > 1 && strings.HasPrefix(req.Messages[1].Content, "<belief>")
}

// Reflection answers a reflection request with one new belief supported by
// every perception shown.
func Reflection(req openaitest.Request) string {
	return ReflectionSaying(req, "The visitor is looking for the old light.")
}

// ReflectionSaying is Reflection with the belief's text given.
func ReflectionSaying(req openaitest.Request, text string) string {
	var ids []string
	for _, m := range reflectPerception.FindAllStringSubmatch(req.Messages[1].Content, -1) {
		ids = append(ids, fmt.Sprintf("%q", m[1]))
	}
	t, _ := json.Marshal(text)
	return `{"add": [{"text": ` + string(t) + `, "confidence": "likely", "supports": [` +
		strings.Join(ids, ",") + `]}]}`
}

// Reflecting is a responder for reflection: the recorder perceiving,
// reflection forming one belief, every belief check compatible; other
// requests go to s.
func Reflecting(s *Scribe) func(openaitest.Request) openaitest.Answer {
	return Believing(s, func() string { return "The visitor is looking for the old light." })
}

// Believing is Reflecting whose new belief says what text returns when the
// reflection runs, so a test tells the beliefs of its chats apart.
func Believing(s *Scribe, text func() string) func(openaitest.Request) openaitest.Answer {
	return func(req openaitest.Request) openaitest.Answer {
		switch {
		case len(RecorderEvents(req)) > 0:
			return openaitest.Answer{Text: RecorderPerceiving(req)}
		case IsBeliefCheck(req):
			return openaitest.Answer{Text: `{"compatible": true, "against": []}`}
		case IsReflection(req):
			return openaitest.Answer{Text: ReflectionSaying(req, text())}
		}
		return s.Respond(req)
	}
}
