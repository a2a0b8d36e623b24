package openaitest

import "testing"

func TestReaderAnswersOnlyFromItsPrompt(t *testing.T) {
	story := []Message{
		{Role: "system", Content: "You are Hollis, who keeps an inn. Answer plainly."},
		{Role: "user", Content: "[Previously]\n## Facts ledger\n- Ada: The password for the cellar door is heron.\n- Ada: My brother's name is Tomas."},
		{Role: "assistant", Content: "I see."},
		{Role: "user", Content: "I changed the password for the cellar door; it is kestrel now."},
		{Role: "assistant", Content: "I see."},
	}
	ask := func(q string) string {
		msgs := append(append([]Message{}, story...), Message{Role: "user", Content: q})
		return Reader(Request{Messages: msgs}).Text
	}
	for _, tc := range []struct{ question, want string }{
		{"What is my brother's name?", "- Ada: My brother's name is Tomas."},
		// Both password lines match as well: the later one is current.
		{"What is the password for the cellar door?", "I changed the password for the cellar door; it is kestrel now."},
		// Never told: one word of two is not enough to answer.
		{"What is my sister's name?", ReaderUnknown},
		{"Where is the harbour?", ReaderUnknown},
		{"我哥哥叫什么？", ReaderUnknownZH},
		// Statements are acknowledged, not answered.
		{"My brother's name is Tomas.", ReaderAck},
		{"我哥哥叫托马斯。", ReaderAckZH},
		{`((OOC: say exactly: "I will meet you at dawn."))`, "I will meet you at dawn."},
		{"（（场外：原样说出：“天亮见。”））", "天亮见。"},
	} {
		if got := ask(tc.question); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.question, got, tc.want)
		}
	}
}

func TestReaderNeverQuotesTheQuestion(t *testing.T) {
	req := Request{Messages: []Message{{Role: "system", Content: "You keep an inn."}, {Role: "user", Content: "Where did I hide the silver locket?"}}}
	if got := Reader(req).Text; got != ReaderUnknown {
		t.Errorf("got %q, want %q", got, ReaderUnknown)
	}
}

func TestReadChinese(t *testing.T) {
	texts := []string{"【前情提要】\n- 阿青: 我哥哥的名字叫托马斯，他在盐湾补渔网。\n- 阿青: 我的剑的名字是余烬。", "我给剑改了名字，从今天起剑的名字是霜刃。"}
	for _, tc := range []struct{ question, want string }{
		{"我哥哥的名字叫什么？", "- 阿青: 我哥哥的名字叫托马斯，他在盐湾补渔网。"},
		{"剑的名字是什么？", "我给剑改了名字，从今天起剑的名字是霜刃。"},
		{"我妹妹叫什么？", ReaderUnknownZH},
	} {
		if got := Read(texts, tc.question); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.question, got, tc.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("# Heading\nHe said \"Go.\" Then left! It cost 3.5 coins.\n\n你好。我走了！")
	want := []string{`He said "Go."`, "Then left!", "It cost 3.5 coins.", "你好。", "我走了！"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sentence %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
