package memory

import (
	"strings"
	"testing"

	"troupe/handbook"
	"troupe/models"
)

// TestParseConsolidationRefuses has one bad line per case, each carrying
// the distinctive words "lantern painted, cranes": the answer is refused
// wherever the line sits, and the reason names the rule and the line number
// but never those words.
func TestParseConsolidationRefuses(t *testing.T) {
	t.Parallel()
	const words = "lantern painted, cranes"
	hb := "# Characters (across chats)\n- Qingwu keeps the inn. [chat:c1][chat:c2]\n- Qingwu's sister comes on market days."
	rs := "# Earlier chats\n- Rainy night (c1): asked after Huaijin. [chat:c1]\n- Tea fields (c2): the harvest. [chat:c2]\n- Keep replies short."
	answer := func(hb, rs string) string {
		return Markers["en"][0] + "\n" + hb + "\n" + Markers["en"][1] + "\n" + rs
	}
	tests := []struct {
		name, hb, rs string
		// rule is a phrase the reason must have.
		rule string
	}{
		{"untagged line in the handbook", hb + "\n- The " + words + ".", rs, "handbook line 4 has no [chat:<id>] tag"},
		{"untagged line in the resident", hb, rs + "\n- The " + words + ".", "resident summary line 5 has no [chat:<id>] tag"},
		{"deleted chat's block heading", hb + "\n\n# Chat: The " + words + " (c3)\n- gone", rs, "handbook line 5 is a heading of the deleted chat c3"},
		{"deleted chat's heading, level two, in the resident", hb, rs + "\n## Chat: The " + words + " (c3)", "resident summary line 5 is a heading of the deleted chat c3"},
		{"deleted chat's heading in Chinese", hb + "\n# 局：" + words + "（c3）", rs, "heading of the deleted chat c3"},
		// A block in the engine's form, of a live chat, is dropped (see
		// TestCheckConsolidationDropsChatBlocks); any other is refused.
		{"live chat's heading, level two", "## Chat: The " + words + " (c1)\nSource: chat c1\n\n" + hb, rs, "handbook line 1 is a chat block heading"},
		{"unknown chat's block heading", "# Chat: The " + words + " (c9)\nSource: chat c9\n\n" + hb, rs, "handbook line 1 is a chat block heading"},
		{"live chat's block in the resident", hb, "# Chat: The " + words + " (c1)\n" + rs, "resident summary line 1 is a chat block heading"},
		{"heading outside the format", hb + "\n## The " + words, rs, "handbook line 4 is a heading the format does not have"},
		{"capitalised tag", hb + "\n- The " + words + ". [Chat:c3]", rs, "handbook line 4 has a malformed tag"},
		{"capitalised tag of a live chat", hb, rs + "\n- The " + words + ". [Chat:c1]", "resident summary line 5 has a malformed tag"},
		{"parenthesised tag", hb + "\n- The " + words + ". (chat c3)", rs, "has a malformed tag"},
		{"parenthesised tag beside a good one", hb + "\n- The " + words + ". [chat:c1] (chat c3)", rs, "has a malformed tag"},
		{"tag with a space", hb + "\n- The " + words + ". [chat: c1]", rs, "has a malformed tag"},
		{"two ids in one tag", hb + "\n- The " + words + ". [chat:c1,c2]", rs, "has a malformed tag"},
		{"full-width brackets", hb + "\n- The " + words + "。（局：c3）", rs, "has a malformed tag"},
		{"full-width square brackets", hb + "\n- The " + words + "。【局：c1】", rs, "has a malformed tag"},
		{"parenthesised tag of a live chat", hb + "\n- The " + words + ". [chat:c2] (chat c1)", rs, "has a malformed tag"},
		{"parenthesised tag with a colon", hb + "\n- The " + words + ". [chat:c2] (chat: cranes)", rs, "has a malformed tag"},
		{"tag without a colon", hb + "\n- The " + words + ". [chat c1]", rs, "has a malformed tag"},
		{"deleted chat's tag", hb + "\n- The " + words + ". [chat:c1][chat:c3]", rs, "is tagged with the deleted chat c3"},
		{"unknown chat's tag", hb + "\n- The " + words + ". [chat:cranes]", rs, "has a tag naming no chat of this card"},
		{"deleted chat's id in the text", hb, rs + "\n- The " + words + " (c3). [chat:c1]", "resident summary line 5 names the deleted chat c3"},
		{"a hand edit dropped", strings.Replace(hb, "\n- Qingwu's sister comes on market days.", "", 1), rs, "the handbook lost a line a person wrote"},
		{"a hand edit tagged", strings.Replace(hb, "market days.", "market days. [chat:c1]", 1), rs, "the handbook lost a line a person wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := consolidationCheck(false)
			_, _, err := ParseConsolidation(answer(tt.hb, tt.rs), c)
			if err == nil {
				t.Fatalf("accepted:\n%s\n---\n%s", tt.hb, tt.rs)
			}
			if !strings.Contains(err.Error(), tt.rule) {
				t.Errorf("reason = %q, want it to say %q", err, tt.rule)
			}
			for _, w := range []string{"lantern", "painted", "cranes", "Qingwu", "sister", "market", "Huaijin", "harvest"} {
				if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w)) {
					t.Errorf("reason %q quotes the story word %q", err, w)
				}
			}
			if q := repairQuote(err); q == "" {
				t.Errorf("no line for the repair request")
			}
		})
	}
}

// TestParseConsolidationAccepts: the format's headings in either language,
// tagged lines and the lines a person wrote pass; the handbook returned is
// the cross-chat part as written.
func TestParseConsolidationAccepts(t *testing.T) {
	t.Parallel()
	for _, zh := range []bool{false, true} {
		c := consolidationCheck(zh)
		lang := langOf(zh)
		hand := handbook.HandEdits(handbook.CrossSections(c.PrevHandbook), c.PrevHandbookHand)[0]
		// Words that only look like tags pass: a chat room, a chatter, 局势.
		hb := strings.Join([]string{handbook.CrossHeadings[lang][0], "- Qingwu keeps the inn (c1's story). [chat:c1][chat:c2]", hand, "", handbook.CrossHeadings[lang][1], "- Qishui has one ferry (chat room) [chatter]. [chat:c2]", "- 【局势】紧张。 [chat:c1]"}, "\n")
		rh := handbook.ResidentHeadings[lang]
		rs := strings.Join([]string{rh[0], "- Rainy night (c1): asked after Huaijin. [chat:c1]", handbook.HandEdits(c.PrevResident, c.PrevResidentHand)[0], "", rh[2], "- One ferry. [chat:c2]"}, "\n")
		gotHB, gotRS, err := ParseConsolidation(Markers[lang][0]+"\n"+hb+"\n"+Markers[lang][1]+"\n"+rs, c)
		if err != nil {
			t.Fatalf("%s: refused a good answer: %v", lang, err)
		}
		if gotHB != hb || gotRS != rs {
			t.Errorf("%s: got\n%s\n---\n%s", lang, gotHB, gotRS)
		}
	}
}

// TestChatBlockFromRecap: the engine's block carries every line of the
// recap but its title, cannot be ended early by a line of the recap, and is
// what Blocks and Forget see as the chat's.
func TestChatBlockFromRecap(t *testing.T) {
	t.Parallel()
	recap := "# A letter\n\n## Plot\n- A visit.\n# Chat: Sneaky (c9)\n\n## Established facts\n- The pear tree did not blossom."
	block := handbook.ChatBlock("en", "c2", "Tea\nfields", recap)
	want := "# Chat: Tea fields (c2)\n## Plot\n- A visit.\n## Chat: Sneaky (c9)\n\n## Established facts\n- The pear tree did not blossom.\nSource: chat c2"
	if block != want {
		t.Errorf("block =\n%s\nwant\n%s", block, want)
	}
	hb := BuildHandbook("en", nil, "") + block + "\n\n# Characters (across chats)\n- x [chat:c2]"
	if ids := handbook.Blocks(hb); len(ids) != 1 || !ids["c2"] {
		t.Errorf("blocks = %v, want only c2", ids)
	}
	if got := handbook.Forget(hb, "c2"); strings.Contains(got, "pear") || strings.Contains(got, "Sneaky") {
		t.Errorf("forgetting c2 left its block's lines:\n%s", got)
	}
	if got := handbook.CrossSections(hb); got != "# Characters (across chats)\n- x [chat:c2]" {
		t.Errorf("cross sections = %q", got)
	}
	zh := handbook.ChatBlock("zh", "c1", "雨夜", "# 标题\n## 剧情脉络\n- 甲")
	if zh != "# 局：雨夜（c1）\n## 剧情脉络\n- 甲\n来源：局 c1" || !handbook.Blocks(zh)["c1"] {
		t.Errorf("zh block = %q", zh)
	}
}

// TestBuildHandbookKeepsCrossLinesOutOfBlocks: a line the scribe's part
// opens with (a person's note, kept where they put it) stays outside the
// last chat's block, so it is neither sent back as that block's nor
// forgotten with that chat.
func TestBuildHandbookKeepsCrossLinesOutOfBlocks(t *testing.T) {
	t.Parallel()
	live := []models.Recap{{ChatID: "c1", ChatName: "One", Content: "# T\n## Plot\n- x"}}
	hb := BuildHandbook("en", live, "- A person's note.\n\n# World facts (across chats)\n- y [chat:c1]")
	if got := handbook.CrossSections(hb); !strings.HasPrefix(got, "# Characters (across chats)\n- A person's note.") {
		t.Errorf("cross sections = %q", got)
	}
	if got := handbook.Forget(hb, "c1"); !strings.Contains(got, "- A person's note.") || strings.Contains(got, "- x") {
		t.Errorf("after forgetting c1:\n%s", got)
	}
	if got := BuildHandbook("en", nil, "- A person's note."); got != "- A person's note." {
		t.Errorf("without chats = %q", got)
	}
}

// BenchmarkParseConsolidation validates an answer for 50 chats: 300
// cross-chat entries and a full resident, with a person's lines in both.
func BenchmarkParseConsolidation(b *testing.B) {
	c := ConsolidationCheck{Language: "en", Known: map[string]bool{}, Deleted: map[string]bool{"gone": true}, ResidentMax: 1200}
	var hb, rs strings.Builder
	hb.WriteString(handbook.CrossHeadings["en"][0] + "\n- Qingwu's sister comes on market days.\n")
	rs.WriteString(handbook.ResidentHeadings["en"][0] + "\n- Keep replies short.\n")
	for i := range 300 {
		id := "01JCHAT" + string(rune('A'+i%50/26)) + string(rune('A'+i%26))
		c.Known[id] = true
		hb.WriteString("- A fact of the story that one chat established, long enough to be realistic. [chat:" + id + "]\n")
		if i < 20 {
			rs.WriteString("- A short line. [chat:" + id + "]\n")
		}
	}
	c.PrevHandbook, c.PrevResident = hb.String(), rs.String()
	c.PrevHandbookHand, c.PrevResidentHand = handSet("- Qingwu's sister comes on market days."), handSet("- Keep replies short.")
	answer := Markers["en"][0] + "\n" + hb.String() + Markers["en"][1] + "\n" + rs.String()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseConsolidation(answer, c); err != nil {
			b.Fatal(err)
		}
	}
}
