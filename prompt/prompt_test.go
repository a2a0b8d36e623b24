package prompt_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/config"
	"troupe/handbook"
	"troupe/memory"
	"troupe/prompt"
	"troupe/prompt/prompttest"
	"troupe/recall"
	"troupe/record"
)

// defaultBudget is the envelope of the shipped config.
func defaultBudget() prompt.Budget { return memory.ConfigFrom(config.Default().Memory, "en").Budget() }

// sceneOf renders what bot passes as the scene: the speaking character's
// ledger view, then its relationships to those present.
func sceneOf(lang string, l record.Ledger, in record.ViewInput, relationships string) string {
	return l.View(lang, in) + "\n" + relationships
}

// longResident is a stored resident summary (with its tags) of about n
// runes, paragraph by paragraph.
func longResident(lang string, n int) string {
	line := "- Maren keeps the lamp at Gull Rock and never leaves it unlit. [chat:01A]\n"
	head := "# Earlier chats\n"
	if lang == "zh" {
		line = "- 苏砚守着临溪的茶馆，每晚都等最后一位客人走了才关门。[chat:01A]\n"
		head = "# 往局记忆\n"
	}
	var b strings.Builder
	b.WriteString(head)
	for i := 0; utf8.RuneCountInString(handbook.StripTags(b.String())) < n; i++ {
		if i%4 == 3 {
			b.WriteString("\n")
		}
		b.WriteString(line)
	}
	return b.String()
}

func manyThreads(lang string, n int) []string {
	out := make([]string, n)
	for i := range out {
		if lang == "zh" {
			out[i] = fmt.Sprintf("第%d件事：码头的账本少了一页，有人在夜里来过灯塔，得在涨潮前查清楚。", i+1)
		} else {
			out[i] = fmt.Sprintf("matter %d: a page is missing from the harbour ledger and someone came to the lamp at night", i+1)
		}
	}
	return out
}

// sceneMaterial is a turn with a summary, a stored resident summary too
// long to fit beside the scene, a scene and a recall block.
func sceneMaterial(lang string) prompt.Material {
	ledger := record.Ledger{Time: "Day 2, dusk", Place: "the lamp-room", Where: map[string]string{"Ada": "the lamp-room"},
		Inventory: map[string][]string{"Maren": {"the logbook", "a brass key"}}}
	view := record.ViewInput{Character: "Maren", Present: []string{"Ada"}, Threads: manyThreads(lang, 36), Known: []string{"the jetty", "the lamp-room stair"}}
	now := prompt.Turn{ID: "9", Role: prompt.RoleUser, Name: "Ada", Content: "Show me the page now. Please."}
	rel := "Ada: wary trust, warming."
	item := recall.Item{ID: "p1", Kind: recall.Perception, Text: "Tobin left the logbook open at the page about the wreck.", When: "Day 1, night", Mode: "saw"}
	belief := recall.Item{ID: "b1", Kind: recall.Belief, Text: "Ada will go down to the rocks alone if nobody stops her.", Confidence: "likely"}
	history, system, summary := prompttest.TurnsEN[2:], "You are Maren.", prompttest.SummaryEN
	if lang == "zh" {
		ledger = record.Ledger{Time: "第二天黄昏", Place: "茶馆", Where: map[string]string{"阿澜": "茶馆"},
			Inventory: map[string][]string{"苏砚": {"账本", "一把铜钥匙"}}}
		view = record.ViewInput{Character: "苏砚", Present: []string{"阿澜"}, Threads: manyThreads(lang, 95), Known: []string{"渡口", "后院的小门"}}
		now = prompt.Turn{ID: "9", Role: prompt.RoleUser, Name: "阿澜", Content: "现在就给我看那一页吧。"}
		rel = "阿澜：戒备中的信任，正在变暖。"
		item.Text, item.When = "陆沉把账本摊开在写沉船的那一页。", "第一天夜里"
		belief.Text = "没人拦着的话，阿澜会一个人下到礁石那边去。"
		history, system, summary = prompttest.TurnsZH[2:], "你是苏砚。", "## 前情提要\n阿澜到了临溪。"
	}
	return prompt.Material{
		AssembleInput: prompt.AssembleInput{
			Language: lang,
			System:   system,
			Summary:  summary,
			History:  append(slices.Clip(history), now),
			Scene:    sceneOf(lang, ledger, view, rel),
			Recall: recall.Block(lang, []recall.Scored{
				{Candidate: recall.Candidate{Item: item}, Picked: true},
				{Candidate: recall.Candidate{Item: belief}, Picked: true},
			}),
		},
		StoredResident: memory.ResidentOf(longResident(lang, 1000)),
	}
}

// TestBuildPromptSceneGolden: with a ledger view and a recall block, the
// resident summary gets what the scene leaves of the envelope (cut, with its
// marker) and the per-turn block comes last, right before the new message.
func TestBuildPromptSceneGolden(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			m := sceneMaterial(lang)
			b := defaultBudget()
			p, err := prompt.Build(m, b)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "build_prompt_scene_"+lang, render(p.Messages))
			msgs := p.Messages
			last, block := msgs[len(msgs)-1], msgs[len(msgs)-2]
			if want := m.History[len(m.History)-1].Content; last.Role != prompt.RoleUser || last.Content != want {
				t.Fatalf("last message = %+v, want the new user message", last)
			}
			// Recall first: a kept block is sent again alone in this place.
			if block.Role != prompt.RoleSystem || !strings.HasPrefix(block.Content, m.Recall) || !strings.HasSuffix(block.Content, m.Scene) {
				t.Fatalf("message before the new one is not the recall and scene block: %q", block.Content)
			}
			prev := msgs[1].Content
			marker := prompt.ResidentMarker[lang]
			if !strings.HasSuffix(prev, marker) {
				t.Fatalf("the resident summary was not cut to fit the envelope: %q", prev)
			}
			resident := prev[strings.LastIndex(prev, "# "):]
			if got := utf8.RuneCountInString(resident) + utf8.RuneCountInString(m.Scene); got > b.Envelope {
				t.Errorf("resident (%d) + scene (%d) = %d runes, over the %d envelope", utf8.RuneCountInString(resident), utf8.RuneCountInString(m.Scene), got, b.Envelope)
			}
			// Without the scene, the same resident fits whole: the cut is the
			// scene's doing.
			m.Scene = ""
			whole, err := prompt.Build(m, b)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(whole.Messages[1].Content, marker) {
				t.Errorf("without a scene the resident is still cut")
			}
		})
	}
}

// TestBuildPromptWithoutSceneIsAssemble: a turn without scene or recall
// builds exactly what Assemble gave before (the existing golden files).
func TestBuildPromptWithoutSceneIsAssemble(t *testing.T) {
	t.Parallel()
	in := prompt.AssembleInput{Language: "zh", System: "你是苏砚。", Summary: "## 前情提要\n阿澜到了临溪。", History: prompttest.TurnsZH[2:]}
	p, err := prompt.Build(prompt.Material{AssembleInput: in, StoredResident: memory.ResidentOf("# 往局记忆\n- 第一局 [chat:01A]")}, defaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "assemble_after_compaction_zh", render(p.Messages))
}

// nextTurn is m one turn later: the reply and a new user message appended,
// the scene's time moved on (its length kept, so the resident summary's cut
// stays where it was) and a new recall block.
func nextTurn(m prompt.Material, n int) prompt.Material {
	m.History = append(slices.Clip(m.History),
		prompt.Turn{ID: fmt.Sprintf("a%d", n), Role: prompt.RoleAssistant, Name: "Maren", Content: fmt.Sprintf("*Maren trims the wick (%d).* \"Not tonight.\"", n)},
		prompt.Turn{ID: fmt.Sprintf("u%d", n), Role: prompt.RoleUser, Name: "Ada", Content: fmt.Sprintf("I ask again, for the %dth time, about the page.", n)})
	m.Scene = fmt.Sprintf("Time: Day 2, hour %02d", n%100) + m.Scene[strings.Index(m.Scene, "\n"):]
	m.Recall = recall.Block("en", []recall.Scored{{Candidate: recall.Candidate{Item: recall.Item{Text: fmt.Sprintf("Ada asked %d times already.", n), Mode: "heard"}}, Picked: true}})
	return m
}

// TestBuildPromptPrefixIsStable: everything before the per-turn block of
// one turn is, byte for byte, the start of the next turn's prompt.
func TestBuildPromptPrefixIsStable(t *testing.T) {
	t.Parallel()
	m1 := nextTurn(sceneMaterial("en"), 0)
	m2 := nextTurn(m1, 1)
	p1, err := prompt.Build(m1, defaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	p2, err := prompt.Build(m2, defaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	k := slices.IndexFunc(p1.Messages, func(m prompt.Message) bool { return strings.Contains(m.Content, m1.Scene) })
	if k < 0 || k != len(p1.Messages)-2 {
		t.Fatalf("scene block at %d of %d messages", k, len(p1.Messages))
	}
	if !slices.Equal(p1.Messages[:k], p2.Messages[:k]) {
		t.Fatalf("turn 2 does not start with turn 1's prefix:\n%s\n---\n%s", render(p1.Messages[:k]), render(p2.Messages[:k]))
	}
	if p1.Messages[k] == p2.Messages[k] {
		t.Fatalf("positive control: the per-turn block should differ from the message turn 2 has in its place")
	}
}

// prefixReuse is the share of next's bytes, as serialized, that start with
// the same bytes as prev: what a prompt cache can reuse.
func prefixReuse(prev, next []prompt.Message) float64 {
	a, b := render(prev), render(next)
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return float64(n) / float64(len(b))
}

// reuseRun plays turns turns and returns the median turn-to-turn prefix
// reuse, with the scene and recall placed as Build places them, or
// (inSystem) folded into the system message as a layout that puts them first
// would.
func reuseRun(tb testing.TB, turns int, inSystem bool) float64 {
	m := sceneMaterial("en")
	m.History = prompttest.TurnsEN[:2]
	// A scene of everyday size: a few open matters, not a full envelope.
	m.Scene = sceneOf("en", record.Ledger{Time: "Day 2, dusk", Place: "the lamp-room", Inventory: map[string][]string{"Maren": {"the logbook"}}},
		record.ViewInput{Character: "Maren", Present: []string{"Ada"}, Threads: manyThreads("en", 3), Known: []string{"the jetty"}}, "Ada: wary trust, warming.")
	var prev []prompt.Message
	var reuse []float64
	for i := range turns {
		m = nextTurn(m, i)
		in := m
		if inSystem {
			in.System = m.System + "\n\n" + m.Scene + "\n\n" + m.Recall
			in.Scene, in.Recall = "", ""
		}
		p, err := prompt.Build(in, defaultBudget())
		if err != nil {
			tb.Fatal(err)
		}
		if prev != nil {
			reuse = append(reuse, prefixReuse(prev, p.Messages))
		}
		prev = p.Messages
	}
	slices.Sort(reuse)
	return reuse[len(reuse)/2]
}

// TestPrefixReuseOverFiftyTurns: over a 50-turn run the median prompt
// shares most of its bytes with the one before; the same run with the scene
// and recall in the system message reuses almost nothing.
func TestPrefixReuseOverFiftyTurns(t *testing.T) {
	t.Parallel()
	last, first := reuseRun(t, 50, false), reuseRun(t, 50, true)
	t.Logf("median turn-to-turn prefix reuse over 50 turns: %.3f last, %.3f in the system message", last, first)
	if last < 0.8 {
		t.Errorf("median prefix reuse %.3f, want at least 0.8", last)
	}
	if first > 0.2 {
		t.Errorf("control: with the per-turn block in the system message reuse is %.3f; the measure cannot tell the layouts apart", first)
	}
}

// BenchmarkBuildPrompt50Turns builds a 50-turn run and reports the median
// turn-to-turn prefix reuse.
func BenchmarkBuildPrompt50Turns(b *testing.B) {
	var reuse float64
	for b.Loop() {
		reuse = reuseRun(b, 50, false)
	}
	b.ReportMetric(reuse, "median-prefix-reuse")
}

// TestMinUsefulZeroFromConfig: the service reads min_useful_chars as the
// config gives it. At 0 a resident summary with little room is cut to that
// room, never left out for being short; at the shipped 200 it is left out.
func TestMinUsefulZeroFromConfig(t *testing.T) {
	t.Parallel()
	stored := longResident("en", 1200)
	others := 4300 - 80 // leaves the resident 80 runes of the envelope
	mc := config.Default().Memory
	if got := memory.NewService(nil, nil, memory.ConfigFrom(mc, "en"), nil).FitResident("en", stored, others); got != "" {
		t.Fatalf("control: with min_useful_chars %d an 80-rune room should leave the resident out, got %q", mc.MinUsefulChars, got)
	}
	mc.MinUsefulChars = 0
	got := memory.NewService(nil, nil, memory.ConfigFrom(mc, "en"), nil).FitResident("en", stored, others)
	if got == "" || !strings.HasSuffix(got, prompt.ResidentMarker["en"]) || utf8.RuneCountInString(got) > 80 {
		t.Fatalf("min_useful_chars 0: got %q (%d runes), want a cut of at most 80 runes ending in the marker", got, utf8.RuneCountInString(got))
	}
	// The same through Build, with the scene taking the envelope.
	m := sceneMaterial("en")
	m.Scene = strings.Repeat("x", others)
	p, err := prompt.Build(m, memory.ConfigFrom(mc, "en").Budget())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Messages[1].Content, got) {
		t.Errorf("Build did not inject the 80-rune resident: %q", p.Messages[1].Content)
	}
}

// TestTurnBlockAfterTheSpeakersOwnLine: in a scene, the per-turn block of
// a member who speaks second stands after its own last line, before the
// user's message and the other member's reply that are new to it; with
// nothing but its own line at the end it comes last.
func TestTurnBlockAfterTheSpeakersOwnLine(t *testing.T) {
	t.Parallel()
	history := []prompt.Turn{
		{ID: "u1", Role: prompt.RoleUser, Name: "Ada", Content: "Good evening."},
		{ID: "a1", Role: prompt.RoleAssistant, Name: "苏砚", Content: "Tea?"},
		{ID: "u2", Role: prompt.RoleUser, Name: "Ada", Content: "Where is the compass?"},
		{ID: "a2", Role: prompt.RoleAssistant, Name: "Maren", Content: "Under the oak.", Other: true},
	}
	if got := prompt.NewMessages(history); got != 2 {
		t.Fatalf("NewMessages = %d, want 2 (the user's message and Maren's line)", got)
	}
	msgs := prompt.Assemble(prompt.AssembleInput{Language: "en", System: "You are 苏砚.", History: history, NameUsers: true, Recall: "[Remembered] the oak"})
	want := []string{"system", "user", "assistant", "system", "user", "user"}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, want) || msgs[3].Content != "[Remembered] the oak" || msgs[5].Content != "Maren: Under the oak." {
		t.Fatalf("prompt:\n%s", render(msgs))
	}
	if got := prompt.NewMessages(history[:2]); got != 2 {
		t.Fatalf("NewMessages after her own line = %d, want 2", got)
	}
}
