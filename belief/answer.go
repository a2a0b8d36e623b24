package belief

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"troupe/text"
)

// Answer is the model's reflection answer, as the contract spells it. Ids
// are bare; a missing key means nothing of that kind.
type Answer struct {
	Add        []Add        `json:"add,omitempty"`
	Strengthen []Strengthen `json:"strengthen,omitempty"`
	Doubt      []Doubt      `json:"doubt,omitempty"`
	Merge      []Merge      `json:"merge,omitempty"`
	Drop       []Drop       `json:"drop,omitempty"`
	// Malformed lists the items that could not be read at all (a string
	// where an object belongs, a number for a text): Validate reports each
	// as dropped while the rest of the answer still counts.
	Malformed []string `json:"-"`
}

// Add proposes a new belief.
type Add struct {
	Text       string `json:"text"`
	Confidence string `json:"confidence,omitempty"`
	Supports   IDs    `json:"supports,omitempty"`
	Against    IDs    `json:"against,omitempty"`
	About      Names  `json:"about,omitempty"`
}

// Strengthen proposes raising a belief one level with new support.
type Strengthen struct {
	Belief   string `json:"belief"`
	Supports IDs    `json:"supports,omitempty"`
}

// Doubt proposes lowering a belief one level for contradicting perceptions.
type Doubt struct {
	Belief  string `json:"belief"`
	Against IDs    `json:"against,omitempty"`
}

// Merge proposes replacing several beliefs by one.
type Merge struct {
	Beliefs    IDs    `json:"beliefs"`
	Text       string `json:"text"`
	Confidence string `json:"confidence,omitempty"`
	Supports   IDs    `json:"supports,omitempty"`
}

// Drop proposes letting a belief go because of newer perceptions.
type Drop struct {
	Belief  string `json:"belief"`
	Because IDs    `json:"because,omitempty"`
}

// IDs is a list of ids. It reads a JSON array of strings or numbers, or a
// single value, and trims the "p:"/"b:" prefixes and brackets a model copies
// from the prompt's lines.
type IDs []string

// UnmarshalJSON reads an array, a single value or null.
func (l *IDs) UnmarshalJSON(b []byte) error {
	ss, err := stringList(b)
	if err != nil {
		return err
	}
	out := IDs{}
	for _, s := range ss {
		if s = bareID(s); s != "" {
			out = append(out, s)
		}
	}
	*l = out
	return nil
}

// Names is a list of names (the people and things a belief is about). It
// reads like IDs but keeps each name whole.
type Names []string

// UnmarshalJSON reads an array, a single value or null.
func (l *Names) UnmarshalJSON(b []byte) error {
	ss, err := stringList(b)
	if err != nil {
		return err
	}
	out := Names{}
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	*l = out
	return nil
}

// stringList reads a JSON array of strings or numbers, a single one, or null.
func stringList(b []byte) ([]string, error) {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil, nil
	}
	var raw []json.RawMessage
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
	} else {
		raw = []json.RawMessage{b}
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			var n json.Number
			if err := json.Unmarshal(r, &n); err != nil {
				return nil, fmt.Errorf("a list holds something other than strings")
			}
			s = n.String()
		}
		out = append(out, s)
	}
	return out, nil
}

// bareID strips what a model may copy around an id from the prompt lines.
func bareID(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "[")
	s = strings.TrimSuffix(s, "]")
	s = strings.TrimSpace(s)
	if len(s) > 2 && (s[0] == 'p' || s[0] == 'b' || s[0] == 'P' || s[0] == 'B') && s[1] == ':' {
		s = strings.TrimSpace(s[2:])
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 { // "01JA turn=12"
		s = s[:i]
	}
	return s
}

// answerKeys are the keys of a reflection answer.
var answerKeys = []string{"add", "strengthen", "doubt", "merge", "drop"}

// ParseAnswer reads a reflection answer. It tolerates code fences and text
// around the JSON object, ignores unknown keys and treats missing ones as
// empty. An item that cannot be read is listed in Answer.Malformed. The
// error, wrapping ErrAnswer, is for an answer that is not the contract as a
// whole: no JSON object, or a non-empty object with none of the keys.
func ParseAnswer(text string) (Answer, error) {
	obj, err := jsonObject(text)
	if err != nil {
		return Answer{}, err
	}
	var a Answer
	known := 0
	for _, k := range answerKeys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		known++
		items, ok := itemList(raw)
		if !ok {
			a.Malformed = append(a.Malformed, k)
			continue
		}
		for i, it := range items {
			if !a.decode(k, it) {
				a.Malformed = append(a.Malformed, fmt.Sprintf("%s[%d]", k, i))
			}
		}
	}
	if known == 0 && len(obj) > 0 {
		return Answer{}, fmt.Errorf("%w: none of the keys add, strengthen, doubt, merge, drop", ErrAnswer)
	}
	return a, nil
}

// decode appends one item of kind k; false when it cannot be read.
func (a *Answer) decode(k string, raw json.RawMessage) bool {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return false
	}
	var err error
	switch k {
	case "add":
		var v Add
		if err = json.Unmarshal(raw, &v); err == nil {
			a.Add = append(a.Add, v)
		}
	case "strengthen":
		var v Strengthen
		if err = json.Unmarshal(raw, &v); err == nil {
			v.Belief = bareID(v.Belief)
			a.Strengthen = append(a.Strengthen, v)
		}
	case "doubt":
		var v Doubt
		if err = json.Unmarshal(raw, &v); err == nil {
			v.Belief = bareID(v.Belief)
			a.Doubt = append(a.Doubt, v)
		}
	case "merge":
		var v Merge
		if err = json.Unmarshal(raw, &v); err == nil {
			a.Merge = append(a.Merge, v)
		}
	case "drop":
		var v Drop
		if err = json.Unmarshal(raw, &v); err == nil {
			v.Belief = bareID(v.Belief)
			a.Drop = append(a.Drop, v)
		}
	}
	return err == nil
}

// itemList reads an array of items, a single object as a one-item list, or
// null as none; false for anything else.
func itemList(raw json.RawMessage) ([]json.RawMessage, bool) {
	t := bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(t, []byte("null")):
		return nil, true
	case len(t) > 0 && t[0] == '{':
		return []json.RawMessage{t}, true
	}
	var items []json.RawMessage
	if err := json.Unmarshal(t, &items); err != nil {
		return nil, false
	}
	return items, true
}

// jsonObject reads the JSON object of an answer (text.JSONObject), with
// its keys lowered.
func jsonObject(answer string) (map[string]json.RawMessage, error) {
	i, j, ok := text.JSONObject(answer)
	if !ok {
		if strings.TrimSpace(answer) == "" {
			return nil, fmt.Errorf("%w: the answer is empty", ErrAnswer)
		}
		return nil, fmt.Errorf("%w: no JSON object found", ErrAnswer)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(answer[i:j]), &obj); err != nil {
		return nil, fmt.Errorf("%w: no JSON object found", ErrAnswer)
	}
	out := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		if k == strings.ToLower(k) {
			out[k] = v
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys { // "Add" counts when "add" is absent
		lk := strings.ToLower(strings.TrimSpace(k))
		if _, ok := out[lk]; !ok {
			out[lk] = obj[k]
		}
	}
	return out, nil
}
