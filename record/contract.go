package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"troupe/text"
)

// Answer is the recorder's JSON answer, as DESIGN.md's contract writes it.
// Missing keys mean "nothing of that kind"; unknown keys are ignored.
type Answer struct {
	Turns         []TurnInfo     `json:"turns"`
	Events        []EventInfo    `json:"events"`
	Changes       []ChangeInfo   `json:"changes"`
	Perceptions   []Perception   `json:"perceptions"`
	Threads       []ThreadOp     `json:"threads"`
	Ledger        *Ledger        `json:"ledger"`
	Entities      []Entity       `json:"entities"`
	Relationships []Relationship `json:"relationships"`
	Knowledge     []Knowledge    `json:"knowledge"`
}

// StoryTime is a moment in the story: a day and the minute of that day.
type StoryTime struct {
	Day    Int `json:"day"`
	Minute Int `json:"minute"`
}

// Before reports whether t is earlier than u.
func (t StoryTime) Before(u StoryTime) bool {
	return t.Day < u.Day || (t.Day == u.Day && t.Minute < u.Minute)
}

// TurnInfo is the story time and place of one turn.
type TurnInfo struct {
	Turn      Int        `json:"turn"`
	StoryTime *StoryTime `json:"story_time"`
	Place     string     `json:"place"`
}

// EventInfo enriches one plain event.
type EventInfo struct {
	Event      string  `json:"event"`
	Importance Int     `json:"importance"`
	About      Strings `json:"about"`
	Place      string  `json:"place"`
}

// ChangeInfo is a change event: what actually changed in a turn.
type ChangeInfo struct {
	Turn       Int     `json:"turn"`
	Actor      string  `json:"actor"`
	Text       string  `json:"text"`
	Importance Int     `json:"importance"`
	Pivotal    bool    `json:"pivotal"`
	About      Strings `json:"about"`
}

// Perception modes.
const (
	Saw      = "saw"
	Heard    = "heard"
	Told     = "told"
	Inferred = "inferred"
	Missed   = "none"
)

// Perception is one character's version of an event.
type Perception struct {
	Character  string `json:"character"`
	Event      string `json:"event"`
	Mode       string `json:"mode"`
	Text       string `json:"text"`
	Gist       string `json:"gist"`
	Importance Int    `json:"importance"`
	Via        string `json:"via"`
}

// ThreadOp opens or resolves a thread.
type ThreadOp struct {
	Op     string `json:"op"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Event  string `json:"event"`
	Thread string `json:"thread"`
}

// Entity is a place, item, exit or piece of lore.
type Entity struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Within string `json:"within"`
}

// Relationship is one character's view of another.
type Relationship struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Description string `json:"description"`
	Event       string `json:"event"`
}

// Knowledge grants a character knowledge of an entity.
type Knowledge struct {
	Character string `json:"character"`
	Entity    string `json:"entity"`
	Event     string `json:"event"`
}

// Int reads a JSON number or a numeric string, as models write both; a
// fraction is rounded.
type Int int

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1e9 {
		return fmt.Errorf("not a number")
	}
	*n = Int(math.Round(f))
	return nil
}

// Strings reads a list of strings, or one string as a list of one.
type Strings []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// ErrNotContract: the answer is not the recorder's JSON object at all. The
// caller asks once more with RepairMessage, then gives up with the work owed.
var ErrNotContract = errors.New("record: answer is not the recorder's JSON object")

// ParseAnswer reads the recorder's answer: one JSON object, possibly in a
// code fence or with text around it. A wrong type for a whole section is
// ErrNotContract; a wrong value inside one item is left for Validate.
func ParseAnswer(answer string) (Answer, error) {
	i, j, ok := text.JSONObject(answer)
	if !ok {
		return Answer{}, fmt.Errorf("%w: no JSON object found", ErrNotContract)
	}
	var sections map[string]json.RawMessage
	if err := json.Unmarshal([]byte(answer[i:j]), &sections); err != nil {
		return Answer{}, fmt.Errorf("%w: %s", ErrNotContract, jsonProblem(err))
	}
	var a Answer
	fields := map[string]any{
		"turns": &a.Turns, "events": &a.Events, "changes": &a.Changes, "perceptions": &a.Perceptions,
		"threads": &a.Threads, "ledger": &a.Ledger, "entities": &a.Entities,
		"relationships": &a.Relationships, "knowledge": &a.Knowledge,
	}
	known := 0
	for key, dst := range fields {
		body, ok := sections[key]
		if !ok || string(bytes.TrimSpace(body)) == "null" {
			continue
		}
		known++
		if err := json.Unmarshal(body, dst); err != nil {
			return Answer{}, fmt.Errorf("%w: section %q: %s", ErrNotContract, key, jsonProblem(err))
		}
	}
	if known == 0 && len(sections) > 0 {
		return Answer{}, fmt.Errorf("%w: none of its keys is a section of the contract", ErrNotContract)
	}
	return a, nil
}

// jsonProblem describes a decoding error without quoting the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s where %s was expected", te.Value, te.Type)
	}
	return "invalid JSON"
}
