package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// removedKeys say where the settings of earlier versions went.
var removedKeys = map[string]string{
	"telegram.rate_per_minute":   "removed: limits.rate_per_minute now limits every platform",
	"telegram.max_message_chars": "removed: limits.max_message_chars now limits every platform",
	"memory.recall_timeout":      "removed: recall.timeout caps all of recall, the embeddings call included",
}

// fileErrors turns a YAML decoding error into *Errors naming the dotted
// key at the line each problem points to: every wrong value and unknown key
// of the file, not only the first.
func fileErrors(path string, data []byte, err error) []*Error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []*Error{fileError(path, data, err.Error())}
	}
	out := make([]*Error, 0, len(te.Errors))
	for _, msg := range te.Errors {
		out = append(out, fileError(path, data, msg))
	}
	return out
}

// fileError turns one problem of a YAML decoding error into an *Error.
func fileError(path string, data []byte, msg string) *Error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return &Error{Key: path, Problem: yamlProblem(msg)}
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Key: path, Problem: yamlProblem(msg)}
	}
	line, _ := strconv.Atoi(m[1])
	key := keyAtLine(&root, "", line)
	if key == "" {
		return &Error{Key: path, Problem: yamlProblem(msg)}
	}
	problem := m[2]
	switch {
	case strings.Contains(problem, "not found in type") && removedKeys[key] != "":
		problem = removedKeys[key]
	case strings.Contains(problem, "not found in type"):
		problem = "unknown key"
	case strings.Contains(problem, "into time.Duration"):
		problem = durationHint(yamlValue(problem))
	case strings.Contains(problem, "cannot unmarshal"):
		problem = "wrong type of value: " + strings.TrimSpace(problem[strings.Index(problem, "cannot unmarshal"):])
	}
	return &Error{Key: key, Problem: problem + " (" + path + " line " + m[1] + ")"}
}

// yamlValue is the value quoted in a "cannot unmarshal !!int `120` into …"
// message.
func yamlValue(problem string) string {
	_, rest, ok := strings.Cut(problem, "`")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "`")
	return v
}

// durationHint says how to write a duration; a bare number gets the same
// number with a unit ("write 120s"), as seconds are what people mean.
func durationHint(value string) string {
	value = strings.TrimSpace(value)
	if _, err := strconv.ParseFloat(value, 64); err == nil {
		return fmt.Sprintf("%s has no unit: write %ss (or %sms, %sm, %sh)", value, value, value, value, value)
	}
	return fmt.Sprintf("%q is not a duration: write a number with a unit, such as 30s, 5m or 1h", value)
}

// keyAtLine returns the dotted key whose key or value starts at line.
func keyAtLine(n *yaml.Node, prefix string, line int) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, prefix, line); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			if v.Kind == yaml.MappingNode {
				if sub := keyAtLine(v, path, line); sub != "" {
					return sub
				}
			}
			if k.Line == line || (v.Kind != yaml.MappingNode && v.Line == line) {
				return path
			}
		}
	}
	return ""
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
