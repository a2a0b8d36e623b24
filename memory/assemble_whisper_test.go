package memory_test

import (
	"strings"
	"testing"

	"troupe/memory"
)

// TestAssembleMarksAWhisper: a whispered user line reaches the prompt
// marked as whispered — by whom, to whom, unheard by the others — in the
// prompt's language, named or not; a public line stays as it was.
func TestAssembleMarksAWhisper(t *testing.T) {
	t.Parallel()
	history := []memory.Turn{
		{Role: memory.RoleUser, Name: "Ada", Content: "the key is under the third stone", WhisperTo: "Maren"},
		{Role: memory.RoleAssistant, Content: "I will keep it."},
		{Role: memory.RoleUser, Name: "Bob", Content: "what are you two talking about?"},
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
			msgs := memory.Assemble(memory.AssembleInput{Language: tt.lang, System: "card", History: history, NameUsers: tt.nameUsers})
			// system, the whisper, the answer, Bob's line
			if len(msgs) != 4 {
				t.Fatalf("%d messages, want 4: %+v", len(msgs), msgs)
			}
			if got := msgs[1]; got.Role != memory.RoleUser || got.Content != tt.want {
				t.Errorf("the whispered line = %s %q, want user %q", got.Role, got.Content, tt.want)
			}
			if got := msgs[3].Content; strings.Contains(got, "Whisper") || strings.Contains(got, "悄悄话") {
				t.Errorf("a public line is marked as whispered: %q", got)
			}
		})
	}
}

// TestTranscriptMarksAWhisper: the transcript a scribe writes a summary or
// recap from marks a whispered line as the prompt does, in the scribe's
// language, so the summary of the one whispered to does not state the
// secret as something everyone heard.
func TestTranscriptMarksAWhisper(t *testing.T) {
	t.Parallel()
	turns := []memory.Turn{
		{Role: memory.RoleUser, Name: "Ada", Content: "the key is under the third stone", WhisperTo: "Maren"},
		{Role: memory.RoleAssistant, Content: "I will keep it."},
		{Role: memory.RoleUser, Content: "what are you two talking about?"},
	}
	tests := []struct{ lang, want string }{
		{"en", "Ada: the key is under the third stone [Whispered by Ada to Maren alone: nobody else present heard this line or Maren's answer to it]\n\nMaren: I will keep it.\n\nBob: what are you two talking about?"},
		{"zh", "Ada: the key is under the third stone 【悄悄话：Ada 只说给 Maren 听，在场的其他人没听到这句话，也没听到 Maren 的回答】\n\nMaren: I will keep it.\n\nBob: what are you two talking about?"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			if got := memory.Transcript(tt.lang, turns, "Maren", "Bob"); got != tt.want {
				t.Errorf("Transcript = %q, want %q", got, tt.want)
			}
			ev := memory.BuildEvidence(tt.lang, turns, "Maren", "Bob", 60000)
			if ev.Transcript != tt.want {
				t.Errorf("BuildEvidence = %q, want %q", ev.Transcript, tt.want)
			}
		})
	}
}
