package handbook

import (
	"regexp"
	"strings"
	"testing"
)

// handSet is the stored hand-line set a hand edit of texts records: every
// non-blank line.
func handSet(texts ...string) string {
	var hs []string
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if strings.TrimSpace(l) != "" {
				hs = append(hs, HandLineHash(l))
			}
		}
	}
	return strings.Join(hs, "\n")
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
