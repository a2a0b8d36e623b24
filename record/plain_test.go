package record

import (
	"fmt"
	"strings"
	"testing"
)

func TestPlainEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []Plain
	}{
		{"english quote and action", `*She turns the key.* "Open it."`,
			[]Plain{{Action, "*She turns the key.*"}, {Line, `"Open it."`}}},
		{"narration around speech", `Mara looks up. "Who's there?" She reaches for the lamp.`,
			[]Plain{{Action, "Mara looks up."}, {Line, `"Who's there?"`}, {Action, "She reaches for the lamp."}}},
		{"apostrophes are not quotes", `It's late; the keeper's lamp is out.`,
			[]Plain{{Action, "It's late; the keeper's lamp is out."}}},
		{"curly quotes", `He nods. “The west gate, at dawn.”`,
			[]Plain{{Action, "He nods."}, {Line, "“The west gate, at dawn.”"}}},
		{"chinese corner brackets", `她把钥匙递过来。「明早在西门等我。」`,
			[]Plain{{Action, "她把钥匙递过来。"}, {Line, "「明早在西门等我。」"}}},
		{"chinese curly quotes", `“罗盘埋在老槐树下。”他低声说。`,
			[]Plain{{Line, "“罗盘埋在老槐树下。”"}, {Action, "他低声说。"}}},
		{"one event per paragraph", "She waits.\n\nThe rain stops.",
			[]Plain{{Action, "She waits."}, {Action, "The rain stops."}}},
		{"a quote spanning lines stays one line", "\"First line\nsecond line\" she says",
			[]Plain{{Line, "\"First line\nsecond line\""}, {Action, "she says"}}},
		{"unclosed quote runs to the end of the paragraph", `She whispers "don't go`,
			[]Plain{{Action, "She whispers"}, {Line, `"don't go`}}},
		{"ooc parentheses make no events", `((brb, dinner)) "I'm back."`,
			[]Plain{{Line, `"I'm back."`}}},
		{"ooc line makes no events", "OOC: can we skip to morning?\n*Morning comes.*",
			[]Plain{{Action, "*Morning comes.*"}}},
		{"only ooc", "((lol))", nil},
		{"punctuation only", `"…" *…*`, nil},
		{"two action spans", `*sits* *sighs*`,
			[]Plain{{Action, "*sits*"}, {Action, "*sighs*"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlainEvents(tt.text)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("PlainEvents(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestPlainEventsAreBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "*step %d*\n", i)
	}
	got := PlainEvents(b.String())
	if len(got) != MaxPlainEvents {
		t.Fatalf("%d events, want %d", len(got), MaxPlainEvents)
	}
	if !strings.Contains(got[len(got)-1].Text, "step 199") {
		t.Errorf("the last event lost the text after the cap: %q", got[len(got)-1].Text)
	}
	long := PlainEvents(`"` + strings.Repeat("a", 3*MaxEventRunes) + `"`)
	if n := len([]rune(long[0].Text)); n != MaxEventRunes {
		t.Errorf("a long line is %d runes, want %d", n, MaxEventRunes)
	}
}

func FuzzPlainEvents(f *testing.F) {
	for _, s := range []string{`*a* "b" c`, "「明」他说。", "((x)) OOC: y\n\"z", "“unclosed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		evs := PlainEvents(s)
		if len(evs) > MaxPlainEvents {
			t.Fatalf("%d events", len(evs))
		}
		for _, e := range evs {
			if e.Kind != Action && e.Kind != Line {
				t.Fatalf("kind %q", e.Kind)
			}
			if !inCharacter(e.Text) {
				t.Fatalf("event without letters: %q", e.Text)
			}
		}
	})
}
