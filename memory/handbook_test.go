package memory

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/models"
	"troupe/prompt"
)

// handSet is the stored hand-line set a hand edit of texts records: every
// non-blank line.
func handSet(texts ...string) string {
	var hs []string
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if strings.TrimSpace(l) != "" {
				hs = append(hs, models.HandLineHash(l))
			}
		}
	}
	return strings.Join(hs, "\n")
}

func TestFitResidentBudget(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/worked/resident.md")
	if err != nil {
		t.Fatal(err)
	}
	resident := StripTags(strings.TrimSpace(string(data)))
	// Make it longer than the 400 characters that are left when the others
	// take 3900, with paragraphs to cut at.
	long := resident + "\n\n" + strings.Repeat("- Another remembered detail of the inn and the rain.\n", 20)
	b := prompt.Budget{ResidentMax: 1200, Envelope: 4300, MinUseful: 200}
	tests := []struct {
		name   string
		text   string
		others int
		check  func(t *testing.T, got string)
	}{
		{"fits: whole", resident, 0, func(t *testing.T, got string) {
			if got != resident {
				t.Errorf("got a changed resident, want it whole")
			}
		}},
		{"others take 3900: cut at a paragraph with the marker", long, 3900, func(t *testing.T, got string) {
			if n := utf8.RuneCountInString(got); n > 400 {
				t.Errorf("got %d characters, want at most 400", n)
			}
			if !strings.HasSuffix(got, prompt.ResidentMarker["en"]) {
				t.Errorf("no marker at the end: %q", got)
			}
			body := strings.TrimSuffix(got, "\n"+prompt.ResidentMarker["en"])
			if !strings.HasPrefix(long, body) || !strings.HasPrefix(long[len(body):], "\n") {
				t.Errorf("not cut at a line boundary: %q", body)
			}
			if utf8.RuneCountInString(body) < 200 {
				t.Errorf("cut leaves %d characters, want at least 200", utf8.RuneCountInString(body))
			}
		}},
		{"others take 4200: left out", long, 4200, func(t *testing.T, got string) {
			if got != "" {
				t.Errorf("got %q, want nothing", got)
			}
		}},
		{"resident max caps even with room", strings.Repeat("x\n", 1000), 0, func(t *testing.T, got string) {
			if n := utf8.RuneCountInString(got); n > 1200 {
				t.Errorf("got %d characters, over the 1200 maximum", n)
			}
		}},
		{"empty stays empty", "", 0, func(t *testing.T, got string) {
			if got != "" {
				t.Errorf("got %q", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, prompt.FitResident("en", tt.text, tt.others, b))
		})
	}
}

func TestForgetTags(t *testing.T) {
	t.Parallel()
	text := "# Chat: One (c1)\n- only in block [chat:c2]\nSource: chat c1\n\n# Chat: Two (c2)\n- two's fact\nSource: chat c2\n\n# Facts\n- shared [chat:c1][chat:c2]\n- only two [chat:c2]\n- hand written\n- only one [chat:c1]"
	got := Forget(text, "c2")
	for _, want := range []string{"# Chat: One (c1)\n- only in block\n", "- hand written", "- only one [chat:c1]"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, gone := range []string{"# Chat: Two", "two's fact", "- only two", "- shared"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q should be gone:\n%s", gone, got)
		}
	}
	if strings.Contains(StripTags(got), "[chat:") {
		t.Errorf("StripTags left a tag")
	}
	// A person wrote the whole text: their own heading and untagged line
	// outside the chat blocks are hand edits; block lines, tagged lines and
	// the format's headings are not.
	if h := HandEdits(text+"\n# Characters (across chats)", handSet(text+"\n# Characters (across chats)")); strings.Join(h, "|") != "# Facts|- hand written" {
		t.Errorf("hand edits = %q, want the custom heading and the untagged entry", h)
	}
	// Lines no person wrote are not hand edits, whatever they look like.
	if h := HandEdits(text, handSet("- shared [chat:c1][chat:c2]")); len(h) != 0 {
		t.Errorf("hand edits without a hand edit = %q, want none", h)
	}
	zh := "# 局：雨夜（jA）\n- 甲\n来源：局 jA\n\n# 人物（跨局）\n- 乙 [chat:jA]"
	if got := Forget(zh, "jA"); strings.Contains(got, "雨夜") || strings.Contains(got, "乙") {
		t.Errorf("zh block or entry kept: %q", got)
	}
}
