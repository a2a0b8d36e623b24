package cards

import (
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"
)

func testEnv() *Env {
	return &Env{
		Char: "Mara", User: "Ada", Original: "ORIGINAL",
		Now:         time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
		Idle:        3 * time.Hour,
		LastMessage: "the last one",
		ChatID:      "01CHAT",
		Rand:        func() float64 { return 0.5 },
	}
}

func TestExpandMacros(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"{{char}} and {{user}}; {{Char}}, {{USER}}", "Mara and Ada; Mara, Ada"},
		{"<USER> meets <BOT> and <CHAR>", "Ada meets Mara and Mara"},
		{"before {{original}} after", "before ORIGINAL after"},
		{"{{random::red::green::blue}}", "green"},
		{"{{random:red, green ,blue}}", "green"},
		{`{{random:a\,b,c}}`, "c"},
		{"{{random::{{char}}::{{user}}}}", "Ada"},
		{"Dice: {{roll:d6}} {{roll:2d6+1}} {{roll 20}}", "Dice: 4 9 11"},
		{"{{roll:0d6}} {{roll:d0}} {{roll:101d6}}", "{{roll:0d6}} {{roll:d0}} {{roll:101d6}}"},
		{"{{time}} {{date}} {{weekday}} {{isodate}} {{isotime}}", "3:09 PM March 14, 2026 Saturday 2026-03-14 15:09"},
		{"idle {{idle_duration}}; said {{lastMessage}}", "idle 3 hours; said the last one"},
		{"a{{newline}}b{{noop}}c", "a\nbc"},
		{"line one\n\n{{trim}}\nline two", "line oneline two"},
		{"x{{// a note {{setvar::gone::1}} }}y{{getvar::gone}}z", "xyz"},
		{"{{setvar::mood::calm}}mood={{getvar::mood}}", "mood=calm"},
		{"{{unknown}} {{char:x}} {{getvar}} {{", "{{unknown}} {{char:x}} {{getvar}} {{"},
		{"{{ char }}", "Mara"},
		{"no macros at all", "no macros at all"},
		{"{{random}}", "{{random}}"},
	}
	for _, tt := range tests {
		e := testEnv()
		if got := e.Expand(tt.in); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandPickIsStablePerChat(t *testing.T) {
	t.Parallel()
	text := "{{pick::a::b::c::d::e::f::g::h}} {{pick::a::b::c::d::e::f::g::h}}"
	first := testEnv().Expand(text)
	for range 5 {
		e := testEnv()
		e.Rand = func() float64 { return 0.99 }
		if got := e.Expand(text); got != first {
			t.Fatalf("pick changed within a chat: %q then %q", first, got)
		}
	}
	differs := false
	for _, chat := range []string{"A", "B", "C", "D", "E", "F"} {
		e := testEnv()
		e.ChatID = chat
		if e.Expand(text) != first {
			differs = true
		}
	}
	if !differs {
		t.Errorf("pick is the same in six chats: %q", first)
	}
}

func TestExpandVariablesCannotExplode(t *testing.T) {
	t.Parallel()
	e := testEnv()
	text := "{{setvar::a::xxxxxxxxxxxxxxxx}}" + strings.Repeat("{{setvar::a::{{getvar::a}}{{getvar::a}}}}", 40) + "{{getvar::a}}"
	got := e.Expand(text)
	if len(got) > maxVarExpansion+len(text) || len(e.Vars["a"]) > maxVarBytes {
		t.Errorf("doubling grew the text to %d bytes and the variable to %d", len(got), len(e.Vars["a"]))
	}
}

func TestExpandVarsPersistInEnv(t *testing.T) {
	t.Parallel()
	e := testEnv()
	e.Expand("{{setvar::hp::10}}")
	if got := e.Expand("HP {{getvar::hp}}"); got != "HP 10" {
		t.Errorf("got %q", got)
	}
	if e.Vars["hp"] != "10" {
		t.Errorf("vars: %v", e.Vars)
	}
}

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		10 * time.Second: "a few seconds", time.Minute: "a minute", 5 * time.Minute: "5 minutes",
		time.Hour: "an hour", 5 * time.Hour: "5 hours", 30 * time.Hour: "a day", 72 * time.Hour: "3 days",
		40 * 24 * time.Hour: "a month", 100 * 24 * time.Hour: "3 months", 400 * 24 * time.Hour: "a year", 1000 * 24 * time.Hour: "3 years",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// FuzzExpand: the expander never panics, leaves text without macros alone
// and never grows text beyond what its macros can add.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"{{char}}", "{{random::a::{{user}}}}", "{{roll:99d1000000}}", "{{{{}}}}", "{{// x", "{{setvar::a::{{getvar::a}}{{getvar::a}}}}", "<USER>{{trim}}\n", "{{pick:a,b}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := testEnv()
		got := e.Expand(s)
		if !strings.ContainsAny(s, "{<") && got != s {
			t.Fatalf("text without macros changed: %q -> %q", s, got)
		}
		// Each macro adds at most the longest value it can produce, and
		// variables at most their own limit.
		if limit := len(s)*16 + 64 + maxVarExpansion; len(got) > limit {
			t.Fatalf("expansion of %d bytes grew to %d", len(s), len(got))
		}
	})
}

// reMatch runs re on text; a nil re finds nothing.
func reMatch(re *regexp2.Regexp, text string) (bool, error) {
	if re == nil {
		return false, nil
	}
	return re.MatchString(text)
}

// FuzzMatchKey: the key matcher never panics, and whole-word matching
// never finds what plain substring matching does not.
func FuzzMatchKey(f *testing.F) {
	for _, s := range [][2]string{{"bar", "barista"}, {"/a+/i", "AAA"}, {"/(?i:ab)cd/", "ABcd"}, {"/sword\\s*1/i", "SWORD 1"}, {"龙", "巨龙"}, {"/(/", "("}, {"İ", "i̇"}} {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, key, text string, cs bool) {
		whole := MatchKey(key, text, cs, true)
		loose := MatchKey(key, text, cs, false)
		re, _, _ := keyRegexp(strings.TrimSpace(key))
		if whole && !loose && re == nil {
			t.Fatalf("key %q in %q: whole-word match without a substring match", key, text)
		}
		// The shortcuts before a regular expression never change its answer.
		if found, err := reMatch(re, text); re != nil && err == nil && whole != found {
			t.Fatalf("key %q in %q: got %v, the expression says %v", key, text, whole, !whole)
		}
	})
}
