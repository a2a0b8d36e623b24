package prompt_test

import (
	"slices"
	"strings"
	"testing"

	"troupe/prompt"
)

// The blocks name every part of the prompt in order, and each message is
// its blocks' texts joined: nothing sent is left unnamed.
func TestAssembleBlocks(t *testing.T) {
	t.Parallel()
	in := prompt.AssembleInput{
		Language: "en", System: "You are Mira.", Summary: "They met at the docks.", Resident: "Mira distrusts sailors.",
		Players:    []prompt.Player{{Name: "Bo", Persona: "a tall smith"}},
		Injections: []prompt.Injection{{Depth: 1, Role: prompt.RoleSystem, Content: "Author's note: rain."}},
		History: []prompt.Turn{
			{ID: "m1", Role: prompt.RoleUser, Content: "Hello.", Recalled: "Mira remembers: an old debt."},
			{ID: "m2", Role: prompt.RoleAssistant, Content: "Hi."},
			{ID: "m3", Role: prompt.RoleUser, Content: "Where to?"},
		},
		Scene: "At the docks.", Recall: "Mira remembers: the lighthouse.", PostHistory: "Stay terse.",
	}
	msgs, blocks := prompt.AssembleBlocks(in)
	if want := prompt.Assemble(in); !slices.Equal(msgs, want) {
		t.Fatalf("AssembleBlocks messages differ from Assemble's:\n%v\n%v", msgs, want)
	}
	var kinds []string
	for _, b := range blocks {
		kinds = append(kinds, b.Kind)
	}
	want := []string{prompt.BlockCharacter, prompt.BlockConventions, prompt.BlockSummary, prompt.BlockResident, prompt.BlockPlayers, prompt.BlockKeptRecall, prompt.BlockHistory, prompt.BlockHistory,
		prompt.BlockInjection, prompt.BlockRecall, prompt.BlockScene, prompt.BlockNew, prompt.BlockPostHistory}
	if !slices.Equal(kinds, want) {
		t.Errorf("got kinds %v, want %v", kinds, want)
	}
	for i, m := range msgs {
		var texts []string
		for _, b := range blocks {
			if b.Message == i {
				texts = append(texts, b.Text)
				if b.Role != m.Role {
					t.Errorf("block %q of message %d: role %s, want %s", b.Kind, i, b.Role, m.Role)
				}
			}
		}
		if len(texts) == 0 {
			t.Errorf("message %d has no block", i)
		}
		for _, tx := range texts {
			if !strings.Contains(m.Content, tx) {
				t.Errorf("message %d does not hold its block %q", i, tx)
			}
		}
	}
	if blocks[11].Ref != "m3" || blocks[6].Ref != "m1" {
		t.Errorf("history blocks name %q and %q, want m1 and m3", blocks[6].Ref, blocks[11].Ref)
	}
}
