package memory

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/prompt"
)

// TestRenderResident: the injected resident is the stored one whole when it
// fits; else a person's lines go first, the last first (the last to go cut
// inside when a start of it fits), then the rest from its end; Cut lists
// what went, in order.
func TestRenderResident(t *testing.T) {
	t.Parallel()
	b := prompt.Budget{ResidentMax: 400, Envelope: 4300, MinUseful: 50}
	scribe := "# Earlier chats\n- Rainy night (c1): asked after Huaijin. [chat:c1]\n\n## Established facts\n- The ferry leaves at dawn. [chat:c1][chat:c2]"
	var hand []string
	for i := 1; i <= 8; i++ {
		hand = append(hand, fmt.Sprintf("- Hand note %d: the lantern is lit at dusk and put out at dawn.", i))
	}
	withHand := strings.Replace(scribe, "\n\n## Established", "\n"+strings.Join(hand, "\n")+"\n\n## Established", 1)
	long := "- " + strings.Repeat("a person's one long paragraph ", 20)
	tests := []struct {
		name    string
		stored  string
		others  int
		want    []string // in the view
		notWant []string
		cut     []string
		handCut int
	}{
		{name: "fits: whole", stored: scribe, want: []string{"(c1): asked after Huaijin.", "The ferry leaves at dawn."}},
		{name: "hand lines go, the last first", stored: withHand,
			want:    []string{"The ferry leaves at dawn.", "Rainy night (c1)", hand[0], hand[2]},
			notWant: []string{hand[5], hand[6], hand[7], "[chat:"},
			cut:     []string{hand[4], hand[5], hand[6], hand[7]}, handCut: 4},
		{name: "one long hand line beside enough else: left out whole", stored: scribe + "\n" + long,
			want: []string{"The ferry leaves at dawn."}, notWant: []string{"one long paragraph"},
			cut: []string{strings.TrimSpace(long)}, handCut: 1},
		{name: "one long hand line and little else: cut inside", stored: "# Earlier chats\n" + long,
			want: []string{"# Earlier chats\n- a person's one long paragraph", "…"},
			cut:  []string{strings.TrimSpace(long)}, handCut: 1},
		{name: "a scene leaves less: the scribe's lines are cut from the end too", stored: withHand, others: 4300 - 120,
			want:    []string{"Rainy night (c1)"},
			notWant: []string{hand[0], "The ferry leaves at dawn."},
			cut:     append(append([]string(nil), hand...), "## Established facts", "- The ferry leaves at dawn."), handCut: 8},
		{name: "less than the minimum: left out", stored: withHand, others: 4300 - 40, cut: nonBlank(strings.Split(handbook.StripTags(withHand), "\n")), handCut: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := prompt.RenderResident("en", ResidentOf(tt.stored), tt.others, b)
			if n := utf8.RuneCountInString(v.Text); n > v.Allowance || v.Allowance != min(b.ResidentMax, b.Envelope-tt.others) {
				t.Errorf("view of %d characters, allowance %d", n, v.Allowance)
			}
			for _, w := range tt.want {
				if !strings.Contains(v.Text, w) {
					t.Errorf("the view lacks %q:\n%s", w, v.Text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(v.Text, w) {
					t.Errorf("the view has %q:\n%s", w, v.Text)
				}
			}
			if marked := strings.HasSuffix(v.Text, prompt.ResidentMarker["en"]); v.Text != "" && marked != (len(tt.cut) > 0) {
				t.Errorf("marker = %v, want it only when something is cut:\n%s", marked, v.Text)
			}
			if fmt.Sprint(v.Cut) != fmt.Sprint(tt.cut) || v.HandCut != tt.handCut {
				t.Errorf("cut = %q (%d by hand), want %q (%d)", v.Cut, v.HandCut, tt.cut, tt.handCut)
			}
		})
	}
}

// TestResidentRoom: the scribe's lines get what a person's leave of the
// budget, never less than half.
func TestResidentRoom(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		limit int
		hand  []string
		want  int
	}{
		{1200, nil, 1200},
		{1200, []string{strings.Repeat("x", 99)}, 1100},
		{1200, []string{strings.Repeat("x", 1499)}, 600},
		{0, []string{"x"}, 0},
	} {
		if got := ResidentRoom(tt.limit, tt.hand); got != tt.want {
			t.Errorf("ResidentRoom(%d, %d lines) = %d, want %d", tt.limit, len(tt.hand), got, tt.want)
		}
	}
}

// TestCheckConsolidationDropsChatBlocks: a block in the engine's form (or
// the seed's source line) of a live chat goes, whatever it holds, and the
// rest is checked as ever; line numbers still count from the marker.
func TestCheckConsolidationDropsChatBlocks(t *testing.T) {
	t.Parallel()
	for _, zh := range []bool{false, true} {
		c := consolidationCheck(zh)
		lang := langOf(zh)
		hb := "# Characters (across chats)\n- Qingwu keeps the inn. [chat:c1][chat:c2]\n- Qingwu's sister comes on market days."
		rs := "# Earlier chats\n- Rainy night (c1): asked after Huaijin. [chat:c1]\n- Keep replies short."
		block := handbook.ChatBlockHeading(lang, "Rainy night", "c1") + "\n## Plot\n- an untagged line of the block\n- (chat c3) [Chat:c9]\n" + strings.TrimSpace(handbook.SourceLine[lang]) + "/c1.md"
		if zh {
			hb = "# 人物（跨局）\n- 苏砚：茶馆老板娘。 [chat:c1][chat:c2]\n- 苏砚的妹妹逢集才来。"
			rs = "# 往局记忆\n- 雨夜（c1）：打听琴师。 [chat:c1]\n- 回复要短。"
		}
		mk := Markers[lang]
		answer := mk[0] + "\n" + block + "\n\n" + hb + "\n\n" + block + "\n" + mk[1] + "\n" + rs
		a, err := CheckConsolidation(answer, c)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		if a.Handbook != hb || a.Resident != rs || fmt.Sprint(a.Dropped) != "[c1 c1]" {
			t.Errorf("%s: got %q, %q, dropped %v; want the cross-chat part, the resident, and c1 twice", lang, a.Handbook, a.Resident, a.Dropped)
		}
		// After its source line, a block is over: what follows is checked.
		_, err = CheckConsolidation(mk[0]+"\n"+block+"\n- an untagged line\n"+hb+"\n"+mk[1]+"\n"+rs, c)
		if err == nil || !strings.Contains(err.Error(), "handbook line 6 has no [chat:<id>] tag") {
			t.Errorf("%s: a line after the block's end: err = %v", lang, err)
		}
	}
}

// FuzzRenderResident: whatever the stored resident and the room, the view
// fits its allowance, is the stored text whole, nothing, or ends with the
// marker, and lists as cut only lines the stored text has.
func FuzzRenderResident(f *testing.F) {
	f.Add(false, "# Earlier chats\n- a fact [chat:c1]\n- a person's line\n\n## Established facts\n- more [chat:c2]", 8, 0, 300, 4300, 50)
	f.Add(true, "# 往局记忆\n- 雨夜（c1）：打听琴师。 [chat:c1]\n- 回复要短，别替我说话。", 30, 3900, 1200, 4300, 200)
	f.Add(false, "- one long line a person wrote, and nothing else at all", 40, 0, 200, 4300, 0)
	f.Fuzz(func(t *testing.T, zh bool, text string, repeat, others, residentMax, envelope, minUseful int) {
		text = strings.Repeat(text, 1+abs(repeat)%(1+4000/max(1, len(text))))
		b := prompt.Budget{ResidentMax: 1 + abs(residentMax)%5000, MinUseful: abs(minUseful) % 1000}
		b.Envelope = b.MinUseful + abs(envelope)%6000
		others = abs(others) % 8000
		lang := langOf(zh)
		v := prompt.RenderResident(lang, ResidentOf(text), others, b)
		whole := handbook.StripTags(text)
		if n := utf8.RuneCountInString(v.Text); n > v.Allowance && v.Text != whole {
			t.Fatalf("a view of %d characters, over the allowance of %d", n, v.Allowance)
		}
		if v.Text != "" && v.Text != whole && !strings.HasSuffix(v.Text, prompt.ResidentMarker[lang]) {
			t.Fatalf("a cut view without the marker: %q", v.Text)
		}
		have := map[string]bool{}
		for _, l := range strings.Split(whole, "\n") {
			have[strings.TrimSpace(l)] = true
		}
		for _, l := range v.Cut {
			if !have[l] {
				t.Fatalf("cut %q, which the stored resident does not have", l)
			}
		}
		if v.HandCut > len(v.Cut) {
			t.Fatalf("%d hand lines cut of %d", v.HandCut, len(v.Cut))
		}
	})
}

// nonBlank returns the lines that are not blank, trimmed: the lines a view
// lists as cut when it leaves the whole resident out.
func nonBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}
