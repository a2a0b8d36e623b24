package bot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	para := strings.Repeat("The lamp burned low and the sea kept talking. ", 20) // ~920 chars
	tests := []struct {
		name   string
		text   string
		limit  int
		pieces int
	}{
		{"short stays whole", "hello", 2000, 1},
		{"4500 chars in 2000 pieces", strings.Repeat(para+"\n\n", 5), 2000, 3},
		{"9000 chars in 4096 pieces", strings.Repeat(para+"\n\n", 10), 4096, 3},
		{"no paragraphs cuts at sentences", strings.Repeat("Short sentence here. ", 200), 1000, 5},
		{"chinese without spaces", strings.Repeat("雨下到第三天，河面上起了雾。", 300), 2000, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.limit)
			if len(got) != tt.pieces {
				t.Errorf("got %d pieces, want %d", len(got), tt.pieces)
			}
			for i, p := range got {
				if n := utf8.RuneCountInString(p); n > tt.limit {
					t.Errorf("piece %d has %d runes, over %d", i, n, tt.limit)
				}
			}
			joined := strings.Join(strings.Fields(strings.Join(got, "")), "")
			want := strings.Join(strings.Fields(tt.text), "")
			if joined != want {
				t.Errorf("text changed by splitting")
			}
		})
	}
}

func TestSplitNeverInsideWord(t *testing.T) {
	text := strings.Repeat("lighthouse ", 500)
	for _, p := range Split(text, 2000) {
		for _, w := range strings.Fields(p) {
			if w != "lighthouse" {
				t.Fatalf("word cut: %q", w)
			}
		}
	}
}

func TestSplitFence(t *testing.T) {
	code := "```go\n" + strings.Repeat("x := 1\n", 400) + "```"
	pieces := Split("Here is the code:\n\n"+code, 2000)
	if len(pieces) < 2 {
		t.Fatalf("got %d pieces, want at least 2", len(pieces))
	}
	for i, p := range pieces {
		if strings.Count(p, "```")%2 != 0 {
			t.Errorf("piece %d leaves a fence open:\n%s", i, p)
		}
		if utf8.RuneCountInString(p) > 2000 {
			t.Errorf("piece %d too long", i)
		}
	}
}
