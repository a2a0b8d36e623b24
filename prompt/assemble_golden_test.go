package prompt_test

import (
	"strings"
	"testing"

	"troupe/prompt"
	"troupe/prompt/prompttest"
)

func TestAssembleGolden(t *testing.T) {
	t.Parallel()
	base := prompt.AssembleInput{Language: "en", System: "You are Maren.", History: prompttest.TurnsEN}
	checkGolden(t, "assemble_before_compaction_en", render(prompt.Assemble(base)))
	after := base
	after.Summary = prompttest.SummaryEN
	after.History = prompttest.TurnsEN[2:]
	msgs := prompt.Assemble(after)
	checkGolden(t, "assemble_after_compaction_en", render(msgs))
	if msgs[1].Role != prompt.RoleUser || !strings.HasPrefix(msgs[1].Content, "[Previously]") {
		t.Errorf("second message is not the previously block: %+v", msgs[1])
	}
	for _, m := range msgs[2:] {
		if strings.Contains(m.Content, "Tobin. He sailed") {
			t.Errorf("covered message sent after compaction")
		}
	}
	zh := prompt.AssembleInput{Language: "zh", System: "你是苏砚。", Summary: "## 前情提要\n阿澜到了临溪。", Resident: "# 往局记忆\n- 第一局", History: prompttest.TurnsZH[2:]}
	checkGolden(t, "assemble_after_compaction_zh", render(prompt.Assemble(zh)))
}
