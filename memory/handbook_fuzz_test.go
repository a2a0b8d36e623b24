package memory

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/prompt"
)

// chatIDRe is the shape of a chat id, as tags spell it.
var chatIDRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

func FuzzForgetTags(f *testing.F) {
	// Short excerpts of testdata/worked: long seeds slow the fuzzer down.
	f.Add("# Chat: Rainy night at the inn (jA)\n## Established facts\n- The old umbrella has a scorch mark.\nSource: chat jA\n\n# Chat: A letter from the tea fields (jB)\n## Unfinished business\n- Carry a letter to the north.\nSource: chat jB\n\n# Characters (across chats)\n- Qingwu: keeper of the inn. [chat:jA][chat:jB]\n- Shen Huaijin left ten years ago. [chat:jA]\n- Qingwu's sister comes on market days.", "jB")
	f.Add("# Earlier chats in this world\n- Rainy night at the inn (jA): the umbrella. [chat:jA]\n- A letter from the tea fields (jB): a second visit. [chat:jB]\n\n## Established facts\n- Qishui: one street, one ferry. [chat:jA][chat:jB]\n- Keep Qingwu's replies short.", "jA")
	f.Add("# Chat: One (c1)\n- only in block [chat:c2]\nSource: chat c1\n\n# Chat: Two (c2)\n- two's fact\nSource: chat c2\n\n# Facts\n- shared [chat:c1][chat:c2]\n- only two [chat:c2]\n- hand written\n- only one [chat:c1]", "c2")
	f.Add("# 局：雨夜（jA）\n- 甲\n来源：局 jA\n\n# 人物（跨局）\n- 乙 [chat:jA]\n- 丙 [chat:jA][chat:jB]\n- 苏砚的妹妹逢集才来。", "jA")
	f.Add("- shared  [chat:c1]  [chat:c2]\n\n\n\n- hand  edit\n[chat:c1]", "c1")
	f.Add("- nested [chat:[chat:c1]c1] tag", "c1")
	f.Add("- broken [chat: c1] and [chat:] tags", "c1")
	f.Add("# Chat: A (c1:x)\n- block of an id with a colon [chat:c1]\n# Chat: B (c1)\n- b", "c1")
	f.Fuzz(func(t *testing.T, text, id string) {
		if !chatIDRe.MatchString(id) {
			return // ids come from the store and have this shape
		}
		tag := "[chat:" + id + "]"
		out := Forget(text, id)
		if strings.Contains(out, tag) {
			t.Fatalf("Forget(%q) left %s:\n%s", id, tag, out)
		}
		if again := Forget(out, id); again != out {
			t.Fatalf("Forget is not idempotent:\nonce:  %q\ntwice: %q", out, again)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, e := range HandEdits(text, handSet(text)) {
			if !lines[e] {
				t.Fatalf("Forget dropped the hand edit %q:\n%s", e, out)
			}
		}
		for _, s := range []string{text, out} {
			stripped := StripTags(s)
			if tags := Tags(stripped); len(tags) > 0 {
				t.Fatalf("StripTags left the tags %q in %q", tags, stripped)
			}
			if strings.Contains(stripped, "[chat:") && !strings.Contains(s, "[chat:") {
				t.Fatalf("StripTags made a tag opening: %q", stripped)
			}
		}
	})
}

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
