package memory

import (
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/prompt"
	"troupe/prompt/prompttest"
)

func TestValidateRecap(t *testing.T) {
	t.Parallel()
	valid := "# Rainy night\n\n## Plot\n- a\n\n## Characters and relationships\n- b\n\n## Established facts\n- c\n\n## Unfinished business\n- d\n\n## The user's play preferences\n- none"
	tests := []struct{ name, text, wantErr string }{
		{"valid", valid, ""},
		{"no title", strings.TrimPrefix(valid, "# Rainy night\n"), "title"},
		{"empty title", strings.Replace(valid, "# Rainy night", "# ", 1), "title"},
		{"missing section", strings.Replace(valid, "## Established facts\n- c\n\n", "", 1), "missing"},
		{"text before the first section", strings.Replace(valid, "\n\n## Plot", "\nSome words.\n## Plot", 1), "between the title"},
		{"garbage", "Sorry, I can't.", "title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ValidateRecap("en", tt.text)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestBuildEvidenceCap(t *testing.T) {
	t.Parallel()
	var turns []prompt.Turn
	for i := 0; i < 400; i++ {
		turns = append(turns, prompt.Turn{Role: prompt.RoleUser, Name: "Ada", Content: strings.Repeat("u", 100)}, prompt.Turn{Role: prompt.RoleAssistant, Name: "Maren", Content: strings.Repeat("a", 100)})
	}
	ev := BuildEvidence("en", turns, "Maren", "Ada", 60000)
	n := utf8.RuneCountInString(ev.Transcript)
	if n > 60000 || ev.Omitted == 0 || n+ev.Omitted != utf8.RuneCountInString(Transcript("en", turns, "Maren", "Ada")) {
		t.Errorf("evidence %d chars with %d omitted", n, ev.Omitted)
	}
	if !strings.HasPrefix(ev.Transcript, "Ada: ") && !strings.HasPrefix(ev.Transcript, "Maren: ") {
		t.Errorf("evidence does not start at a paragraph: %.20q", ev.Transcript)
	}
	small := BuildEvidence("en", turns[:4], "Maren", "Ada", 60000)
	if small.Omitted != 0 || small.Beats != 2 {
		t.Errorf("small evidence: %+v", small)
	}
}

func TestCrossChatPromptsGolden(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "zh"} {
		turns := prompttest.TurnsEN
		if lang == "zh" {
			turns = prompttest.TurnsZH
		}
		recap := RecapPrompt(RecapPromptInput{Language: lang, CharName: turns[0].Name, UserName: turns[1].Name, ChatName: "jA",
			Summary: "## Story so far\n...", Evidence: Evidence{Transcript: Transcript("en", turns, "", ""), Omitted: 1234, Beats: 1}, PreviousRecap: "# Old\n## Plot\n- x"})
		checkGolden(t, "recap_prompt_"+lang, render(recap))
		cons := ConsolidationPrompt(ConsolidationPromptInput{Language: lang, CharName: turns[0].Name, Handbook: handbook.CrossHeadings[lang][0] + "\n- x [chat:jA]\n- a person's note", Resident: handbook.ResidentHeadings[lang][0] + "\n- One (jA): x [chat:jA]",
			Chats: []ChatRef{{ID: "jA", Name: "One"}, {ID: "jC", Name: "Three"}}, Deleted: []string{"jB"}, Changed: []ChangedRecap{{ChatID: "jC", ChatName: "Three", Content: "# Three\n## Plot\n- y"}}, ResidentMax: 1200})
		checkGolden(t, "consolidation_prompt_"+lang, render(cons))
	}
}
