package memory

import (
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/prompt"
)

func FuzzFitResident(f *testing.F) {
	// Texts are short paragraphs repeated inside the target: long seeds
	// slow the fuzzer down.
	en := "# Earlier chats in this world\n- Rainy night at the inn (jA): the traveler asked after Shen Huaijin.\n\n## Established facts\n- Qishui: one street, one ferry.\n- Another remembered detail of the inn and the rain.\n"
	zh := "## 人物与关系现状\n- 苏砚：茶馆老板娘，话少，对沈怀瑾的事讳莫如深。\n\n"
	for _, s := range []struct {
		zh                                               bool
		text                                             string
		repeat, others, residentMax, envelope, minUseful int
	}{
		{false, en, 1, 0, 1200, 4300, 200},
		{false, en, 20, 3900, 1200, 4300, 200},
		{false, en, 20, 4200, 1200, 4300, 200},
		{false, "x\n", 1000, 0, 1200, 4300, 200},
		{false, "x", 5000, 0, 1200, 4300, 200},
		{false, en, 20, 0, 20, 4300, 10},
		{false, en, 20, 4300, 1200, 4300, 0},
		{true, zh, 30, 3900, 1200, 4300, 200},
		{true, zh, 30, 0, 300, 4300, 0},
		{false, "   \n\n  ", 1, 0, 1200, 4300, 200},
	} {
		f.Add(s.zh, s.text, s.repeat, s.others, s.residentMax, s.envelope, s.minUseful)
	}
	f.Fuzz(func(t *testing.T, zh bool, text string, repeat, others, residentMax, envelope, minUseful int) {
		text = strings.Repeat(text, 1+abs(repeat)%(1+10000/max(1, len(text))))
		// Keep the budget to what config.Validate accepts.
		b := prompt.Budget{ResidentMax: 1 + abs(residentMax)%5000, MinUseful: abs(minUseful) % 1000}
		b.Envelope = b.MinUseful + abs(envelope)%6000
		others = abs(others) % 8000
		lang := langOf(zh)
		got := prompt.FitResident(lang, text, others, b)
		allowance := min(b.ResidentMax, b.Envelope-others)
		switch {
		case got == "":
		case got == text:
			if n := utf8.RuneCountInString(got); n > allowance {
				t.Fatalf("kept whole %d characters, over the allowance of %d", n, allowance)
			}
		case strings.HasSuffix(got, prompt.ResidentMarker[lang]):
			if n := utf8.RuneCountInString(got); n > allowance {
				t.Fatalf("cut to %d characters, over the allowance of %d: %q", n, allowance, got)
			}
			body := strings.TrimSuffix(got, "\n"+prompt.ResidentMarker[lang])
			if !strings.HasPrefix(text, body) {
				t.Fatalf("the cut resident is not a beginning of the text: %q", body)
			}
		default:
			t.Fatalf("got neither the whole text, nothing, nor a cut with the marker: %q", got)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if -n < 0 { // the most negative int
			return 0
		}
		return -n
	}
	return n
}
