package text

import (
	"strings"
	"testing"
)

func TestJSONObject(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"Here:\n```json\n{\"a\": {\"b\": [1]}}\n```\nDone.", `{"a": {"b": [1]}}`},
		{`{broken} then {"a": "}"} and {"b": 2}`, `{"a": "}"}`},
		{`no object`, ""},
		{`{"a": }`, ""},
		{strings.Repeat("{", 40) + `{"a": 1}`, ""}, // past the starts it tries
	} {
		got := ""
		if i, j, ok := JSONObject(tt.in); ok {
			got = tt.in[i:j]
		}
		if got != tt.want {
			t.Errorf("JSONObject(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
