package bot

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func FuzzSplit(f *testing.F) {
	// Texts are repeated inside the target: long seeds slow the fuzzer down.
	para := "The lamp burned low and the sea kept talking. "
	for _, s := range []struct {
		text          string
		repeat, limit int
	}{
		{"hello", 1, 2000},
		{para, 100, 2000},
		{para + "\n\n", 50, 500},
		{"Short sentence here. ", 200, 1000},
		{"雨下到第三天，河面上起了雾。", 300, 2000},
		{"雨下到第三天河面上起了雾", 50, 16},
		{"Here is the code:\n\n```go\nfmt.Println(\"lamp\")\n```\n\nThat is all.\n", 40, 100},
		{"```python\nx = 1\ny = 2\n```\n", 20, 16},
		{"```" + strings.Repeat("a", 100), 1, 16},
		{"``` " + strings.Repeat("b", 100), 1, 16},
		{"x", 5000, 4096},
		{"*She smiles.* \"Yes!\" 「好。」她点头。", 20, 40},
		{"a\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000b", 1, 16},
	} {
		f.Add(s.text, s.repeat, s.limit)
	}
	f.Fuzz(func(t *testing.T, text string, repeat, limit int) {
		text = strings.Repeat(text, 1+int(uint(repeat)%uint(1+20000/max(1, len(text)))))
		if limit < 16 || limit > 4096 {
			limit = 16 + int(uint(limit)%(4096-16+1))
		}
		done := make(chan []string, 1)
		go func() { done <- Split(text, limit) }()
		var pieces []string
		select {
		case pieces = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Split(%q, %d) did not return", text, limit)
		}
		for i, p := range pieces {
			if n := utf8.RuneCountInString(p); n > limit {
				t.Fatalf("piece %d has %d characters, over the limit of %d: %q", i, n, limit, p)
			}
			if strings.TrimSpace(p) == "" {
				// Platforms refuse to send an empty or blank message.
				t.Fatalf("piece %d of %d is blank: %q", i, len(pieces), p)
			}
		}
		if !splitKeepsText(text, pieces) {
			t.Fatalf("the pieces lost text:\ntext:   %q\npieces: %q", text, pieces)
		}
	})
}

// splitKeepsText reports whether pieces, less the fence lines Split adds
// when it cuts inside a ``` block (a closing "\n```" at the end of a piece,
// "```" + language + "\n" at the start of the next), hold every non-space
// character of text, in order. Whether a closing fence was added cannot be
// told from a piece alone ("```go\nx\n```" may be whole), so both readings
// are tried against text; so are both reopenings, with the language and
// without.
func splitKeepsText(text string, pieces []string) bool {
	want := dropSpace(text)
	// match reports whether pieces[k:] are what Split makes of the text
	// syn + want[pos:], syn being fence lines Split put in front.
	var match func(k int, syn string, pos int) bool
	match = func(k int, syn string, pos int) bool {
		if k == len(pieces) {
			return syn == "" && pos == len(want)
		}
		p := pieces[k]
		last := k == len(pieces)-1
		try := func(raw string, closed bool) bool {
			got := dropSpace(raw)
			rest := syn + want[pos:min(len(want), pos+len(got))]
			if !strings.HasPrefix(rest, got) {
				return false
			}
			nextSyn, nextPos := "", pos
			if len(got) <= len(syn) {
				nextSyn = syn[len(got):]
			} else {
				nextPos = pos + len(got) - len(syn)
			}
			if !closed {
				return match(k+1, nextSyn, nextPos)
			}
			// The fence reopens with the language of the last one opened,
			// or none when that tag is too long to repeat.
			return match(k+1, "```"+dropSpace(fenceLang(raw))+nextSyn, nextPos) ||
				fenceLang(raw) != "" && match(k+1, "```"+nextSyn, nextPos)
		}
		// Split closes a fence exactly when the piece it cut holds an odd
		// number of them.
		if (last || strings.Count(p, "```")%2 == 0) && try(p, false) {
			return true
		}
		raw, ok := strings.CutSuffix(p, "\n```")
		return ok && !last && strings.Count(raw, "```")%2 == 1 && try(raw, true)
	}
	return match(0, "", 0)
}

// dropSpace returns s without its white space, other bytes untouched.
func dropSpace(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if !unicode.IsSpace(r) {
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}
