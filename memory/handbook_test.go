package memory

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/prompt"
)

// handSet is the stored hand-line set a hand edit of texts records: every
// non-blank line.
func handSet(texts ...string) string {
	var hs []string
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if strings.TrimSpace(l) != "" {
				hs = append(hs, handbook.HandLineHash(l))
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
	resident := handbook.StripTags(strings.TrimSpace(string(data)))
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
