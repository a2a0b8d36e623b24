package prompt_test

import (
	"strings"
	"testing"

	"troupe/prompt"
)

// A scene kept with an older message is sent there while it is the turn's
// scene word for word, and not again at the end; a changed scene is sent at
// the end and the kept one not at all; no scene, none.
func TestAssembleKeepsAnUnchangedSceneInPlace(t *testing.T) {
	const old, now = "Time: day 1, morning", "Time: day 2, evening"
	history := func(kept string) []prompt.Turn {
		return []prompt.Turn{
			{Role: prompt.RoleUser, Content: "first", Recalled: "[Remembered] the oak", Scene: kept},
			{Role: prompt.RoleAssistant, Content: "reply"},
			{Role: prompt.RoleUser, Content: "second"},
		}
	}
	tests := []struct {
		name, kept, scene string
		wantAt            int // index of the kept message's block, -1 none
		wantEnd           string
	}{
		{"unchanged", old, old, 0, ""},
		{"changed", old, now, -1, now},
		{"none kept", "", now, -1, now},
		{"no scene now", old, "", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(tt.kept)
			if got := prompt.KeptSceneAt(h, tt.scene); got != tt.wantAt {
				t.Errorf("KeptSceneAt = %d, want %d", got, tt.wantAt)
			}
			in := prompt.AssembleInput{Language: "en", System: "card", History: h, Scene: tt.scene, Recall: "[Remembered] new"}
			msgs := prompt.Assemble(in)
			// What the built prompt reports sending at its end is what the
			// bot keeps for the turn.
			if p, err := prompt.Build(prompt.Material{AssembleInput: in}, prompt.Budget{}); err != nil || p.EndScene != tt.wantEnd {
				t.Errorf("Build's EndScene = %q (%v), want %q", p.EndScene, err, tt.wantEnd)
			}
			// system, kept block, first, reply, turn block, second
			if len(msgs) != 6 {
				t.Fatalf("%d messages, want 6: %+v", len(msgs), msgs)
			}
			kept, end := msgs[1].Content, msgs[4].Content
			if !strings.HasPrefix(kept, "[Remembered] the oak") {
				t.Errorf("the kept recall block is not in place: %q", kept)
			}
			if strings.Contains(kept, "[Now]") != (tt.wantAt == 0) || tt.wantAt == 0 && !strings.Contains(kept, tt.scene) {
				t.Errorf("kept block %q: want the scene there %v", kept, tt.wantAt == 0)
			}
			if strings.Contains(end, "[Now]") != (tt.wantEnd != "") || tt.wantEnd != "" && !strings.Contains(end, tt.wantEnd) {
				t.Errorf("turn block %q: want the scene %q at the end", end, tt.wantEnd)
			}
		})
	}
}

// A prompt fitted to its limit that leaves out the message keeping the
// scene sends the scene at its end, and says so (Fit.EndScene): the bot
// keeps it with this turn.
func TestFitSendsTheSceneAtTheEndWhenItsPlaceIsLeftOut(t *testing.T) {
	const scene = "Time: day 1, morning"
	in := prompt.AssembleInput{Language: "en", System: "card", Scene: scene, History: []prompt.Turn{
		{Role: prompt.RoleUser, Content: "first", Scene: scene},
		{Role: prompt.RoleAssistant, Content: "reply"},
		{Role: prompt.RoleUser, Content: "second"},
	}}
	count := func(msgs []prompt.Message) int { return len(msgs) }
	f, err := prompt.FitPrompt(in, 0, count, 3)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dropped == 0 || f.EndScene != scene {
		t.Fatalf("dropped %d, EndScene %q; want the first message out and the scene at the end", f.Dropped, f.EndScene)
	}
	if last := f.Messages[len(f.Messages)-2].Content; !strings.Contains(last, scene) {
		t.Errorf("the scene is not before the new message: %+v", f.Messages)
	}
	if f, err := prompt.FitPrompt(in, 0, count, 100); err != nil || f.EndScene != "" {
		t.Errorf("with room, EndScene %q (%v), want the scene kept in place", f.EndScene, err)
	}
}
