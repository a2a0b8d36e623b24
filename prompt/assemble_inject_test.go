package prompt_test

import (
	"strings"
	"testing"

	"troupe/prompt"
)

// TestAssembleInjections: messages placed at a depth land that many history
// messages from the end, one per place and role (system, user, assistant),
// and lore's system text and injections go when the lore is left out (the
// Character's Note, part of the card, stays).
func TestAssembleInjections(t *testing.T) {
	t.Parallel()
	history := []prompt.Turn{{Role: prompt.RoleAssistant, Content: "a1"}, {Role: prompt.RoleUser, Content: "u1"}, {Role: prompt.RoleAssistant, Content: "a2"}, {Role: prompt.RoleUser, Content: "u2"}}
	in := prompt.AssembleInput{Language: "en", System: "S", History: history, PostHistory: "P",
		Injections: []prompt.Injection{{Depth: 2, Role: "system", Content: "note"}},
		Lore: &prompt.Lore{System: "S with lore", Injections: []prompt.Injection{
			{Depth: 0, Role: prompt.RoleAssistant, Content: "last"},
			{Depth: 2, Role: prompt.RoleUser, Content: "d2 user"},
			{Depth: 2, Role: "", Content: "d2 system"},
			{Depth: 99, Role: prompt.RoleSystem, Content: "top"},
			{Depth: 1, Role: prompt.RoleSystem, Content: "  "},
		}}}
	var got []string
	msgs := prompt.Assemble(in)
	for _, m := range msgs[1:] {
		got = append(got, m.Role+":"+strings.ReplaceAll(m.Content, "\n", "|"))
	}
	want := []string{"system:top", "assistant:a1", "user:u1", "system:note|d2 system", "user:d2 user", "assistant:a2", "user:u2", "assistant:last", "system:P"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(msgs[0].Content, "S with lore\n\n") {
		t.Errorf("system message does not use the lore's text: %q", msgs[0].Content)
	}
	bare := prompt.Assemble(in.Bare())
	if !strings.HasPrefix(bare[0].Content, "S\n\n") || len(bare) != 4 || bare[1].Content != "note" {
		t.Errorf("without lore: %+v", bare)
	}
	plain := in
	plain.Lore = nil
	if n := len(prompt.Assemble(plain)); n != len(history)+3 {
		t.Errorf("without lore, %d messages; want history, the note, system and post-history", n)
	}
}
