package prompt_test

import (
	"strings"
	"testing"

	"troupe/prompt"
)

// TestAssembleMarksAWhisper: a whispered user line reaches the prompt
// marked as whispered — by whom, to whom, unheard by the others — in the
// prompt's language, named or not; a public line stays as it was.
func TestAssembleMarksAWhisper(t *testing.T) {
	t.Parallel()
	history := []prompt.Turn{
		{Role: prompt.RoleUser, Name: "Ada", Content: "the key is under the third stone", WhisperTo: "Maren"},
		{Role: prompt.RoleAssistant, Content: "I will keep it."},
		{Role: prompt.RoleUser, Name: "Bob", Content: "what are you two talking about?"},
	}
	tests := []struct {
		lang      string
		nameUsers bool
		want      string
	}{
		{"en", true, "Ada: the key is under the third stone [Whispered by Ada to Maren alone: nobody else present heard this line or Maren's answer to it]"},
		{"en", false, "the key is under the third stone [Whispered by Ada to Maren alone: nobody else present heard this line or Maren's answer to it]"},
		{"zh", true, "Ada: the key is under the third stone 【悄悄话：Ada 只说给 Maren 听，在场的其他人没听到这句话，也没听到 Maren 的回答】"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			msgs := prompt.Assemble(prompt.AssembleInput{Language: tt.lang, System: "card", History: history, NameUsers: tt.nameUsers})
			// system, the whisper, the answer, Bob's line
			if len(msgs) != 4 {
				t.Fatalf("%d messages, want 4: %+v", len(msgs), msgs)
			}
			if got := msgs[1]; got.Role != prompt.RoleUser || got.Content != tt.want {
				t.Errorf("the whispered line = %s %q, want user %q", got.Role, got.Content, tt.want)
			}
			if got := msgs[3].Content; strings.Contains(got, "Whisper") || strings.Contains(got, "悄悄话") {
				t.Errorf("a public line is marked as whispered: %q", got)
			}
		})
	}
}
