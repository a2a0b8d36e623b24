package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// fields is a JSON object read field by field, so that each field can be
// taken the way SillyTavern takes it rather than the way encoding/json
// insists on.
type fields map[string]json.RawMessage

// object reads raw as a JSON object; ok is false for anything else.
func object(raw json.RawMessage) (fields, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var f fields
	if json.Unmarshal(raw, &f) != nil {
		return nil, false
	}
	return f, true
}

// present reports whether the field is there and not null.
func (f fields) present(key string) bool {
	v, ok := f[key]
	return ok && !isNull(v)
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// str reads a text field: a string as it is, a number or a boolean as
// written, null or absent as "". An object or a list is an error naming the
// field.
func (f fields) str(key string) (string, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%s: %v", key, err)
		}
		return s, nil
	case '{':
		return "", fmt.Errorf("%s is an object, not text", key)
	case '[':
		return "", fmt.Errorf("%s is a list, not text", key)
	}
	return string(raw), nil
}

// strs reads a list of text: a list (whose items are read like str), or a
// single string as a list of one.
func (f fields) strs(key string) ([]string, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '[' {
		s, err := f.str(key)
		if err != nil || s == "" {
			return nil, err
		}
		return []string{s}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	var out []string
	for i, it := range items {
		s, err := fields{key: it}.str(key)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", key, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// num reads a number: a JSON number (a fraction rounds to the nearest
// integer), or a string holding one; null or absent is def.
func (f fields) num(key string, def int) (int, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return def, nil
	}
	s, err := f.str(key)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	switch s {
	case "", "true", "false":
		if s == "true" {
			return 1, nil
		}
		return def, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s is %q, not a number", key, s)
	}
	const limit = 1 << 31
	return int(math.Round(math.Max(-limit, math.Min(limit, x)))), nil
}

// list reads a list of objects; an object of objects (SillyTavern's world
// files key their entries by uid) is taken in key order.
func (f fields) list(key string) ([]fields, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	if m, ok := object(raw); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, ea := strconv.Atoi(keys[i])
			b, eb := strconv.Atoi(keys[j])
			if ea == nil && eb == nil {
				return a < b
			}
			return keys[i] < keys[j]
		})
		var items []json.RawMessage
		for _, k := range keys {
			items = append(items, m[k])
		}
		return objects(key, items)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s is not a list", key)
	}
	return objects(key, items)
}

func objects(key string, items []json.RawMessage) ([]fields, error) {
	out := make([]fields, 0, len(items))
	for i, it := range items {
		o, ok := object(it)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is not an object", key, i)
		}
		out = append(out, o)
	}
	return out, nil
}

// reader collects the first error of a run of field reads, so that a card's
// fields read as a list of assignments.
type reader struct {
	f   fields
	err error
}

func (r *reader) str(key string) string {
	s, err := r.f.str(key)
	r.keep(err)
	return s
}

func (r *reader) strs(key string) []string {
	s, err := r.f.strs(key)
	r.keep(err)
	return s
}

func (r *reader) num(key string, def int) int {
	n, err := r.f.num(key, def)
	r.keep(err)
	return n
}

func (r *reader) keep(err error) {
	if r.err == nil {
		r.err = err
	}
}
