package memory_test

import (
	"strings"
	"testing"

	"troupe/memory"
)

// A scene kept with an older message is sent there while it is the turn's
// scene word for word, and not again at the end; a changed scene is sent at
// the end and the kept one not at all; no scene, none.
func TestAssembleKeepsAnUnchangedSceneInPlace(t *testing.T) {
	const old, now = "Time: day 1, morning", "Time: day 2, evening"
	history := func(kept string) []memory.Turn {
		return []memory.Turn{
			{Role: memory.RoleUser, Content: "first", Recalled: "[Remembered] the oak", Scene: kept},
			{Role: memory.RoleAssistant, Content: "reply"},
			{Role: memory.RoleUser, Content: "second"},
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
			if got := memory.KeptSceneAt(h, tt.scene); got != tt.wantAt {
				t.Errorf("KeptSceneAt = %d, want %d", got, tt.wantAt)
			}
			msgs := memory.Assemble(memory.AssembleInput{Language: "en", System: "card", History: h, Scene: tt.scene, Recall: "[Remembered] new"})
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
