package cards

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// lenient reads one JSON object the lenient way SillyTavern does: a field may
// be spelt several ways (snake_case in character books, camelCase in
// world-info files), a number may come as a string and the reverse, a list
// may come as a comma-separated string, and null means "not set". Lookups try
// each object in turn, so an entry's extensions can be listed before the
// entry itself to take precedence.
type lenient []map[string]json.RawMessage

// raw returns the first set (non-null) value under any of names.
func (f lenient) raw(names ...string) (json.RawMessage, bool) {
	for _, m := range f {
		for _, n := range names {
			v, ok := m[n]
			if !ok {
				continue
			}
			v = bytes.TrimSpace(v)
			if len(v) == 0 || string(v) == "null" {
				continue
			}
			return v, true
		}
	}
	return nil, false
}

// str reads a string; a number or a boolean is taken as its text.
func (f lenient) str(names ...string) (string, bool) {
	v, ok := f.raw(names...)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	switch v[0] {
	case '{', '[':
		return "", false
	}
	return string(v), true
}

// strs reads a list of strings: a list (of strings or numbers) or a
// comma-separated string.
func (f lenient) strs(names ...string) []string {
	v, ok := f.raw(names...)
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil {
		out := make([]string, 0, len(list))
		for _, item := range list {
			if s, ok := (lenient{{"v": item}}).str("v"); ok && strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		return out
	}
	s, ok := f.str(names...)
	if !ok {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// num reads a number: a JSON number or a numeric string. NaN and infinities
// are not numbers here.
func (f lenient) num(names ...string) (float64, bool) {
	s, ok := f.str(names...)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	return n, true
}

// integer reads a number rounded to an int, clamped to ±1e9 so that later
// arithmetic on turns and depths cannot overflow.
func (f lenient) integer(names ...string) (int, bool) {
	n, ok := f.num(names...)
	if !ok {
		return 0, false
	}
	return int(math.Round(math.Max(-1e9, math.Min(1e9, n)))), true
}

// boolean reads true/false, "true"/"false", or a number (non-zero is true).
func (f lenient) boolean(names ...string) (bool, bool) {
	s, ok := f.str(names...)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return n != 0, true
	}
	return false, false
}

// object reads a nested object.
func (f lenient) object(names ...string) map[string]json.RawMessage {
	v, ok := f.raw(names...)
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return nil
	}
	return m
}
