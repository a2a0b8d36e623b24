package belief

import (
	"slices"
	"testing"

	"troupe/config"
)

// defaultTrigger is config's reflection.* trigger defaults.
func defaultTrigger() TriggerConfig {
	r := config.Default().Reflection
	return TriggerConfig{Auto: r.Auto, EveryTurns: r.EveryTurns, MinTurns: r.MinTurns, PerRun: r.PerRun, MinNew: r.MinNew}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cfg := defaultTrigger()
	off := cfg
	off.Auto = false
	cast := []Candidate{
		{Name: "Mara", Role: Cast, New: 4},
		{Name: "Elias", Role: Cast, New: 9},
		{Name: "Tess", Role: Cast, New: 2},
		{Name: "Ivo", Role: Cast, New: 6},
		{Name: "Lune", Role: Cast, New: 3},
		{Name: "Player", Role: Player, New: 30},
		{Name: "Ferryman", Role: Background, New: 30},
	}
	within := map[string]string{
		"the tavern":      "the town",
		"the cellar":      "the tavern",
		"the west gate":   "the town",
		"the town":        "the valley",
		"the lighthouse":  "the coast",
		"the tavern room": "the tavern",
	}
	at := func(place string, day int) Scene { return Scene{Place: place, Day: day} }
	tests := []struct {
		name string
		cfg  TriggerConfig
		in   TriggerInput
		why  Why
		want []string
	}{
		{"every_turns since the last reflection: most new first, at most per_run, only min_new",
			cfg, TriggerInput{Turn: 40, LastTurn: 20, LastAutoTurn: 20, Candidates: cast},
			WhyEveryTurns, []string{"Elias", "Ivo", "Mara"}},
		{"fewer turns than every_turns and no scene change",
			cfg, TriggerInput{Turn: 39, LastTurn: 20, LastAutoTurn: 20, Candidates: cast},
			"", nil},
		{"every_turns counts from the last reflection, manual included",
			cfg, TriggerInput{Turn: 40, LastTurn: 30, LastAutoTurn: 10, Candidates: cast},
			"", nil},
		{"scene change: a place neither the last one nor in or around it",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("the lighthouse", 2), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			WhySceneChange, []string{"Elias", "Ivo", "Mara"}},
		{"no scene change: into a place within the last one",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("the cellar", 2), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			"", nil},
		{"no scene change: out to the place around the last one",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("The  Town", 2), LastScene: at("the cellar", 2), Within: within, Candidates: cast},
			"", nil},
		{"no scene change: the same place",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("the tavern", 2), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			"", nil},
		{"scene change: a story day passed in the same place",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("the tavern", 3), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			WhySceneChange, []string{"Elias", "Ivo", "Mara"}},
		{"scene change: a sibling place is not around the last one",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("the west gate", 2), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			WhySceneChange, []string{"Elias", "Ivo", "Mara"}},
		{"no scene change: an unknown place",
			cfg, TriggerInput{Turn: 30, LastTurn: 20, LastAutoTurn: 20, Scene: at("", 2), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			"", nil},
		{"min_turns: no automatic run within 5 turns of the last one, even on a scene change",
			cfg, TriggerInput{Turn: 24, LastTurn: 20, LastAutoTurn: 20, Scene: at("the lighthouse", 3), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			"", nil},
		{"min_turns: the fifth turn may run",
			cfg, TriggerInput{Turn: 25, LastTurn: 20, LastAutoTurn: 20, Scene: at("the lighthouse", 3), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			WhySceneChange, []string{"Elias", "Ivo", "Mara"}},
		{"per_run is a setting",
			TriggerConfig{Auto: true, EveryTurns: 20, MinTurns: 5, PerRun: 1, MinNew: 3}, TriggerInput{Turn: 40, LastTurn: 20, LastAutoTurn: 20, Candidates: cast},
			WhyEveryTurns, []string{"Elias"}},
		{"min_new: nobody with enough new perceptions means no run",
			TriggerConfig{Auto: true, EveryTurns: 20, MinTurns: 5, PerRun: 3, MinNew: 10}, TriggerInput{Turn: 40, LastTurn: 20, LastAutoTurn: 20, Candidates: cast},
			"", nil},
		{"players and background characters never reflect",
			cfg, TriggerInput{Turn: 40, Candidates: []Candidate{{Name: "Player", Role: Player, New: 30}, {Name: "Ferryman", Role: Background, New: 30}}},
			"", nil},
		{"auto off: no automatic run",
			off, TriggerInput{Turn: 400, LastTurn: 20, LastAutoTurn: 20, Scene: at("the lighthouse", 9), LastScene: at("the tavern", 2), Within: within, Candidates: cast},
			"", nil},
		{"manual: every cast member with something new, auto off or not",
			off, TriggerInput{Turn: 21, LastTurn: 20, LastAutoTurn: 20, Manual: true, Candidates: append(cast, Candidate{Name: "Quiet", Role: Cast})},
			WhyManual, []string{"Elias", "Ivo", "Mara", "Lune", "Tess"}},
		{"manual: nobody with anything new",
			cfg, TriggerInput{Turn: 21, Manual: true, Candidates: []Candidate{{Name: "Quiet", Role: Cast}}},
			"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(tc.cfg, tc.in)
			if d.Run != (tc.want != nil) || d.Why != tc.why || !slices.Equal(d.Characters, tc.want) {
				t.Errorf("got %+v, want run %v why %q characters %q", d, tc.want != nil, tc.why, tc.want)
			}
		})
	}
}

func TestSceneChangedWithinCycle(t *testing.T) {
	t.Parallel()
	// A malformed map (a place within itself, through another) must end.
	within := map[string]string{"a": "b", "b": "a"}
	if SceneChanged(Scene{Place: "a"}, Scene{Place: "c"}, within) != true {
		t.Error("a to c: got no scene change, want one")
	}
	if SceneChanged(Scene{Place: "a"}, Scene{Place: "b"}, within) != false {
		t.Error("a to b: got a scene change, want none (b holds a)")
	}
}
