package memory

import (
	"strings"
	"testing"

	"troupe/prompt/prompttest"
)

func TestSummaryPromptGolden(t *testing.T) {
	t.Parallel()
	prev := "## Story so far\nAda arrived in the storm.\n\n## Characters\n- Maren: dry.\n\n## Promises and foreshadowing\n- Maren will show the logbook.\n\n## Facts ledger\n- Day 1.\n\n## Current scene\nDay 1, night, the kitchen."
	en := SummaryPrompt(SummaryPromptInput{Language: "en", CharName: "Maren", UserName: "Ada",
		Transcript: Transcript("en", prompttest.TurnsEN, "Maren", "Ada"), PreviousSummary: prev, Ledger: `{"time":"night"}`})
	checkGolden(t, "summary_prompt_en", render(en))
	zh := SummaryPrompt(SummaryPromptInput{Language: "zh", CharName: "苏砚", UserName: "阿澜",
		Transcript: Transcript("zh", prompttest.TurnsZH, "苏砚", "阿澜")})
	checkGolden(t, "summary_prompt_zh", render(zh))
	// The transcript cannot close the conversation block early.
	if strings.Count(zh[1].Content, "</conversation>") != 1 {
		t.Errorf("transcript text closed the <conversation> block")
	}
}

func TestValidateSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		lang    string
		text    string
		wantErr string
	}{
		{"valid", "en", prompttest.SummaryEN, ""},
		{"valid in a fence", "en", "```markdown\n" + prompttest.SummaryEN + "\n```", ""},
		{"trailing colon on a heading", "en", strings.Replace(prompttest.SummaryEN, "## Characters", "## Characters:", 1), ""},
		{"missing section", "en", strings.Replace(prompttest.SummaryEN, "## Facts ledger\n- Day 1.\n\n", "", 1), `"## Facts ledger" is missing`},
		{"empty scene", "en", prompttest.SummaryEN[:strings.Index(prompttest.SummaryEN, "## Current scene")] + "## Current scene\n\n", "is empty"},
		{"out of order", "en", strings.Replace(strings.Replace(prompttest.SummaryEN, "## Characters", "## TMP", 1), "## Story so far", "## Characters", 1), "in its place"},
		{"text before the first heading", "en", "Here is the summary:\n\n" + prompttest.SummaryEN, "text before the first heading"},
		{"garbage", "en", "I cannot help with that.", "text before"},
		{"empty", "en", "   ", "empty"},
		{"duplicate heading", "en", prompttest.SummaryEN + "\n\n## Characters\n- again", "twice"},
		{"zh valid", "zh", "## 前情提要\n阿澜到了临溪。\n\n## 人物\n- 苏砚\n\n## 承诺与伏笔\n- 明天看琴\n\n## 事实账\n- 第一天\n\n## 当前场景\n第一天傍晚，茶馆。", ""},
		{"zh headings in english", "zh", prompttest.SummaryEN, "text before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ValidateSummary(tt.lang, tt.text)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if !strings.HasPrefix(got, SummaryHeadings[tt.lang][0]) {
					t.Errorf("cleaned summary does not start with the first heading: %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
