package config

import (
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

// fileError turns a YAML decoding error into an *Error naming the dotted
// key at the line the error points to.
func fileError(path string, data []byte, err error) *Error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return &Error{Key: path, Problem: yamlProblem(err)}
	}
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Key: path, Problem: yamlProblem(err)}
	}
	line, _ := strconv.Atoi(m[1])
	key := keyAtLine(&root, "", line)
	if key == "" {
		return &Error{Key: path, Problem: yamlProblem(err)}
	}
	problem := m[2]
	switch {
	case strings.Contains(problem, "not found in type") && removedKeys[key] != "":
		problem = removedKeys[key]
	case strings.Contains(problem, "not found in type"):
		problem = "unknown key"
	case strings.Contains(problem, "cannot unmarshal"):
		problem = "wrong type of value: " + strings.TrimSpace(problem[strings.Index(problem, "cannot unmarshal"):])
	}
	return &Error{Key: key, Problem: problem + " (" + path + " line " + m[1] + ")"}
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
