package memorytest

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"troupe/fakes/openaitest"
	"troupe/text"
)

// ShownPerception is one perception line of a reflection or belief-check
// request: [p:<id> turn=<n>] <text>.
type ShownPerception struct {
	ID   string
	Turn int
	Text string
}

// ShownBelief is one belief line of a reflection request: [b:<id> <confidence>] <text>.
type ShownBelief struct {
	ID, Confidence, Text string
}

var (
	reflectCharacter = regexp.MustCompile(`<character>(.*?)</character>`)
	perceptionLine   = regexp.MustCompile(`(?m)^\[p:(\S+) turn=(\d+)\] (.*)$`)
	beliefLine       = regexp.MustCompile(`(?m)^\[b:(\S+) (doubtful|likely|sure)\] (.*)$`)
)

// ReflectionShown reads a reflection request (DESIGN.md's contract): the
// character, its perceptions and its beliefs as shown.
func ReflectionShown(req openaitest.Request) (character string, ps []ShownPerception, bs []ShownBelief) {
	user := req.Messages[1].Content
	if m := reflectCharacter.FindStringSubmatch(user); m != nil {
		character = m[1]
	}
	for _, m := range perceptionLine.FindAllStringSubmatch(user, -1) {
		n, _ := strconv.Atoi(m[2])
		ps = append(ps, ShownPerception{ID: m[1], Turn: n, Text: m[3]})
	}
	for _, m := range beliefLine.FindAllStringSubmatch(user, -1) {
		bs = append(bs, ShownBelief{ID: m[1], Confidence: m[2], Text: m[3]})
	}
	return character, ps, bs
}

// FaithfulReflection answers a reflection request as a careful character
// would, citing only the perceptions it was shown: one new belief (likely)
// supported by every perception shown, in the character's words ("Maren
// took in: " and the newest perception, cut short), and, when beliefs are
// shown, the first of them strengthened by the same perceptions. The
// answer depends on the request only.
func FaithfulReflection(req openaitest.Request) string {
	name, ps, bs := ReflectionShown(req)
	if len(ps) == 0 {
		return "{}"
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	lead := name + " took in: "
	if hasHan(req.Messages[0].Content) {
		lead = name + "记得："
	}
	a := map[string]any{"add": []map[string]any{{"text": text.CutRunes(lead+ps[len(ps)-1].Text, 200), "confidence": "likely", "supports": ids}}}
	if len(bs) > 0 {
		a["strengthen"] = []map[string]any{{"belief": bs[0].ID, "supports": ids}}
	}
	out, _ := json.Marshal(a)
	return string(out)
}

// compatible is the belief check's answer that finds no conflict.
const compatible = `{"compatible": true, "against": []}`

func hasHan(s string) bool {
	return strings.IndexFunc(s, text.IsHan) >= 0
}
