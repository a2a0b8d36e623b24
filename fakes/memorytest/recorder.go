package memorytest

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"troupe/fakes/openaitest"
)

// isRecorder tells a recorder request by the contract's user message.
func isRecorder(req openaitest.Request) bool {
	if len(req.Messages) < 2 {
		return false
	}
	u := req.Messages[1].Content
	return strings.HasPrefix(u, "<cast>\n") && strings.Contains(u, "\n<events>\n")
}

// RecorderEvent is one event line of a recorder request.
type RecorderEvent struct {
	ID      string
	Turn    int
	Present []string
	Actor   string
	Text    string
}

var eventLine = regexp.MustCompile(`(?m)^\[e:(\S+) turn=(\d+) present=([^\]]*)\] ([^:\n]+): (.*)$`)

// RecorderEvents reads the events of a recorder request.
func RecorderEvents(req openaitest.Request) []RecorderEvent {
	var out []RecorderEvent
	for _, m := range eventLine.FindAllStringSubmatch(req.Messages[1].Content, -1) {
		n, _ := strconv.Atoi(m[2])
		out = append(out, RecorderEvent{ID: m[1], Turn: n, Present: strings.Split(m[3], ","), Actor: m[4], Text: m[5]})
	}
	return out
}

// RecorderCast reads the cast names of a recorder request.
func RecorderCast(req openaitest.Request) []string {
	return recorderSection(req.Messages[1].Content, "cast")
}

// RecorderPlayers reads the players of a recorder request.
func RecorderPlayers(req openaitest.Request) []string {
	return recorderSection(req.Messages[1].Content, "players")
}

func recorderSection(user, tag string) []string {
	i := strings.Index(user, "<"+tag+">\n")
	j := strings.Index(user, "</"+tag+">")
	if i < 0 || j < i {
		return nil
	}
	var out []string
	for _, l := range strings.Split(user[i+len(tag)+3:j], "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
		l = strings.TrimSuffix(l, " (away)")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// timeJump tells an event that says years went by.
var timeJump = regexp.MustCompile(`(?i)years (went by|later|passed)|many winters later|一年又一年|年复一年|多年以后|许多个冬天`)

// yearsDays is how far a time jump moves the story clock.
const yearsDays = 3650

// skippedFlag is the ledger flag the fake keeps its time jumps in, so that
// a later batch goes on from them.
const skippedFlag = "days_skipped"

var skippedLine = regexp.MustCompile(`"` + skippedFlag + `":"(\d+)"`)

// Recorder writes a valid recorder answer: story time day = turn (plus ten
// years from an event that says years went by, kept in the ledger's
// flags for later batches), the place "the lighthouse"; importance 5 for every event (8 and pivotal for
// an event that mentions a key); the first cast member misses nothing; an
// acquaintance from it to every player; the lighthouse as a new place it
// knows; a thread opened by the first event.
func Recorder(req openaitest.Request) string {
	evs := RecorderEvents(req)
	cast := RecorderCast(req)
	if len(evs) == 0 || len(cast) == 0 {
		return "{}"
	}
	a := map[string]any{}
	var turns, events, rels []map[string]any
	seen := map[int]bool{}
	skipped := 0
	if m := skippedLine.FindStringSubmatch(req.Messages[1].Content); m != nil {
		skipped, _ = strconv.Atoi(m[1])
	}
	for _, e := range evs {
		if timeJump.MatchString(e.Text) {
			skipped += yearsDays
		}
		if !seen[e.Turn] {
			seen[e.Turn] = true
			turns = append(turns, map[string]any{"turn": e.Turn, "story_time": map[string]int{"day": e.Turn + skipped, "minute": 600}, "place": "the lighthouse"})
		}
		imp := 5
		if strings.Contains(strings.ToLower(e.Text), "key") {
			imp = 8
		}
		events = append(events, map[string]any{"event": e.ID, "importance": imp, "about": []string{"the lighthouse"}})
	}
	first := evs[0]
	for _, p := range RecorderPlayers(req) {
		if contains(first.Present, p) && contains(first.Present, cast[0]) {
			rels = append(rels, map[string]any{"from": cast[0], "to": p, "description": "met at the lighthouse", "event": first.ID})
		}
	}
	a["turns"], a["events"] = turns, events
	if len(rels) > 0 {
		a["relationships"] = rels
	}
	if !strings.Contains(req.Messages[1].Content, "the lighthouse (place") {
		a["entities"] = []map[string]string{{"name": "the lighthouse", "kind": "place"}}
	}
	if contains(first.Present, cast[0]) {
		a["knowledge"] = []map[string]string{{"character": cast[0], "entity": "the lighthouse", "event": first.ID}}
	}
	a["threads"] = []map[string]string{{"op": "open", "kind": "mystery", "text": "What is the light for?", "event": first.ID}}
	ledger := map[string]any{"time": "day " + strconv.Itoa(evs[len(evs)-1].Turn+skipped) + ", morning", "place": "the lighthouse",
		"roster": append(append([]string(nil), cast...), RecorderPlayers(req)...)}
	if skipped > 0 {
		ledger["flags"] = map[string]string{skippedFlag: strconv.Itoa(skipped)}
	}
	a["ledger"] = ledger
	b, _ := json.Marshal(a)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
