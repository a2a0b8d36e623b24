package memory_test

import (
	"testing"

	"troupe/memory"
	"troupe/prompt"
)

// TestTranscriptMarksAWhisper: the transcript a scribe writes a summary or
// recap from marks a whispered line as the prompt does, in the scribe's
// language, so the summary of the one whispered to does not state the
// secret as something everyone heard.
func TestTranscriptMarksAWhisper(t *testing.T) {
	t.Parallel()
	turns := []prompt.Turn{
		{Role: prompt.RoleUser, Name: "Ada", Content: "the key is under the third stone", WhisperTo: "Maren"},
		{Role: prompt.RoleAssistant, Content: "I will keep it."},
		{Role: prompt.RoleUser, Content: "what are you two talking about?"},
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
