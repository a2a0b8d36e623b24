package memory_test

import (
	"reflect"
	"strings"
	"testing"

	mreflect "troupe/belief"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models"
)

const planHandbook = `# Chat: North (a)
## Established facts
- The mill burned on day 3.
Source: chat a

# Chat: South (b)
## Established facts
- Ola keeps the brass key.
Source: chat b

# Characters (across chats)
- Ola keeps the brass key [chat:b]
- ola keeps the brass key. [chat:a]
- Ola keeps the old brass key at the inn [chat:c]
- Only a gone chat says this [chat:zz]
- Mara's rule: never lie (HAND)
# World facts (across chats)
- The mill burned on day 3 [chat:a]
- The north bridge fell in winter 7 [chat:a]
- The northern bridge collapsed in winter 7 [chat:b]`

func TestPlanHandbook(t *testing.T) {
	hand := handbook.HandLineHash("- Mara's rule: never lie (HAND)")
	live := map[string]bool{"a": true, "b": true, "c": true}
	tests := []struct {
		name          string
		in            memory.HandbookInput
		want          []string
		gone          []string
		merged, stale int
		trimmed       int
	}{{
		name: "restated entries merge with every tag; stale goes; blocks and hand lines stay",
		in:   memory.HandbookInput{Text: planHandbook, Hand: hand, Live: live},
		want: []string{"- Ola keeps the old brass key at the inn [chat:a] [chat:b] [chat:c]", "- Mara's rule: never lie (HAND)",
			"- The mill burned on day 3.", "- The north bridge fell in winter 7 [chat:a]", "- The northern bridge collapsed in winter 7 [chat:b]"},
		gone:   []string{"Only a gone chat", "- Ola keeps the brass key [chat:b]"},
		merged: 2, stale: 1,
	}, {
		name: "pairs the scribe judged the same merge",
		in: memory.HandbookInput{Text: planHandbook, Hand: hand, Live: live,
			Same: []memory.Pair{{A: "- The north bridge fell in winter 7", B: "- The northern bridge collapsed in winter 7"}}},
		want:   []string{"- The north bridge fell in winter 7 [chat:a] [chat:b]"},
		gone:   []string{"- The northern bridge collapsed"},
		merged: 3, stale: 1,
	}, {
		name:   "over budget: what the blocks hold goes first; a chat without a block keeps its entry; hand lines stay",
		in:     memory.HandbookInput{Text: planHandbook, Hand: hand, Live: live, MaxChars: 10},
		want:   []string{"- Mara's rule: never lie (HAND)", "- Ola keeps the old brass key at the inn [chat:a] [chat:b] [chat:c]", "# Chat: North (a)", "- The mill burned on day 3."},
		gone:   []string{"- The mill burned on day 3 [chat:a]", "- The north bridge fell in winter 7 [chat:a]"},
		merged: 2, stale: 1, trimmed: 3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := memory.PlanHandbook(tt.in)
			for _, w := range tt.want {
				if !strings.Contains(got.Text, w) {
					t.Errorf("plan lacks %q:\n%s", w, got.Text)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(got.Text, g) {
					t.Errorf("plan keeps %q:\n%s", g, got.Text)
				}
			}
			if got.Merged != tt.merged || got.Stale != tt.stale || got.Trimmed != tt.trimmed {
				t.Errorf("merged, stale, trimmed = %d, %d, %d; want %d, %d, %d", got.Merged, got.Stale, got.Trimmed, tt.merged, tt.stale, tt.trimmed)
			}
			if got := handbook.HandEdits(got.Text, hand); len(got) != 1 {
				t.Errorf("hand lines after = %q", got)
			}
		})
	}
}

func TestHandbookPairs(t *testing.T) {
	got := memory.HandbookPairs(planHandbook, "", nil)
	want := []memory.Pair{{A: "- The north bridge fell in winter 7", B: "- The northern bridge collapsed in winter 7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pairs = %q, want %q", got, want)
	}
	judged := map[string]bool{memory.PairKey(want[0].B, want[0].A): true}
	if got := memory.HandbookPairs(planHandbook, "", judged); len(got) != 0 {
		t.Errorf("pairs judged before are asked again: %q", got)
	}
}

func TestPlanBeliefs(t *testing.T) {
	sup := func(ps ...string) []mreflect.Evidence {
		var out []mreflect.Evidence
		for _, p := range ps {
			out = append(out, mreflect.Evidence{Perception: p, Stance: mreflect.Supports})
		}
		return out
	}
	bs := []mreflect.Belief{
		{ID: "b1", Text: "Ola trusts the miller", Confidence: 2, Evidence: sup("p1")},
		{ID: "b2", Text: "Ola trusts the miller completely", Confidence: 1, ChangedTurn: 5, Evidence: sup("p2")},
		{ID: "b3", Text: "Ola fears the sea", Confidence: 2, Evidence: sup("gone", "faded")},
		{ID: "b4", Text: "Ola likes bread", Confidence: 1, Evidence: sup("p4")},
		{ID: "b5", Text: "Ola hates the tax man", Confidence: 3, Evidence: sup("p5")},
	}
	alive := map[string]bool{"p1": true, "p2": true, "p4": true, "p5": true, "faded": false}
	got := memory.PlanBeliefs(memory.BeliefsInput{Beliefs: bs, Alive: alive, Max: 2})
	if want := []string{"b3", "b4"}; !reflect.DeepEqual(got.Retired, want) {
		t.Errorf("retired = %v, want %v", got.Retired, want)
	}
	if want := []models.BeliefMerge{{Keep: "b2", Drop: []string{"b1"}}}; !reflect.DeepEqual(got.Merges, want) {
		t.Errorf("merges = %+v, want %+v", got.Merges, want)
	}
}

func TestParseReorganize(t *testing.T) {
	tests := []struct {
		answer string
		want   []int
		ok     bool
	}{
		{`{"same": [2, 1, 2]}`, []int{1, 0}, true},
		{"```json\n{\"same\": []}\n```", nil, true},
		{`{"same": [3]}`, nil, false},
		{`{"same": [0]}`, nil, false},
		{`{"same": ["x"]}`, nil, false},
		{`{"merge": [1]}`, nil, false},
		{`Sure: {"same": [1]}`, nil, false},
		{`pairs 1 and 2`, nil, false},
	}
	for _, tt := range tests {
		got, err := memory.ParseReorganize(tt.answer, 2)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseReorganize(%q) = %v, %v; want %v, ok %v", tt.answer, got, err, tt.want, tt.ok)
		}
	}
}
