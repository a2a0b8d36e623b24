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
		{"\u3000\u3000雨下到第三天，河面上起了雾。\n\n", 20, 40},
		{"你好。" + strings.Repeat("\u3000", 30) + "再见", 1, 16},
		{"aaaaaaaaaaaaaaaaaaa" + strings.Repeat("\r", 20) + "bbbbbbbbbbbbbbbbbbbbb", 1, 16},
	} {
		f.Add(s.text, s.repeat, s.limit)
	}
	f.Fuzz(func(t *testing.T, text string, repeat, limit int) {
		text = strings.Repeat(text, 1+int(uint(repeat)%uint(1+8000/max(1, len(text)))))
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
	type state struct {
		k   int
		syn string
		pos int
	}
	// Readings that fail meet again: remember them, or runs of fences
	// take exponential time.
	failed := map[state]bool{}
	// match reports whether pieces[k:] are what Split makes of the text
	// syn + want[pos:], syn being fence lines Split put in front.
	var match func(at state) bool
	// consume reports whether raw, a piece less any fence Split closed,
	// starts the text from reading at, and the pieces after it make the rest.
	consume := func(at state, raw string, closed bool) bool {
		got := dropSpace(raw)
		if !strings.HasPrefix(at.syn+want[at.pos:min(len(want), at.pos+len(got))], got) {
			return false
		}
		next := state{k: at.k + 1, pos: at.pos}
		if len(got) <= len(at.syn) {
			next.syn = at.syn[len(got):]
		} else {
			next.pos += len(got) - len(at.syn)
		}
		if !closed {
			return match(next)
		}
		// The fence reopens with the language of the last one opened, or
		// none when that tag is too long to repeat.
		lang := dropSpace(fenceLang(raw))
		bare := next
		next.syn = "```" + lang + next.syn
		bare.syn = "```" + bare.syn
		return match(next) || lang != "" && match(bare)
	}
	match = func(at state) bool {
		if at.k == len(pieces) {
			return at.syn == "" && at.pos == len(want)
		}
		if failed[at] {
			return false
		}
		p, last := pieces[at.k], at.k == len(pieces)-1
		// Split closes a fence exactly when the piece it cut holds an odd
		// number of them.
		ok := (last || strings.Count(p, "```")%2 == 0) && consume(at, p, false)
		if raw, cut := strings.CutSuffix(p, "\n```"); !ok && cut && !last && strings.Count(raw, "```")%2 == 1 {
			ok = consume(at, raw, true)
		}
		if !ok {
			failed[at] = true
		}
		return ok
	}
	return match(state{})
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
