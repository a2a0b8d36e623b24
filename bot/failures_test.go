package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/memory"
)

func TestWriteFailuresNamesEachOwedJob(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	fs := []memory.JobFailure{
		{Kind: memory.KindConsolidate, Key: "maren|console:local:ada", Reason: "scribe output rejected twice: " + strings.Repeat("x", 400), At: at, Attempts: 3, NextTry: at.Add(80 * time.Second)},
		{Kind: memory.KindCompact, Key: "01CHAT", Reason: "scribe: timeout", At: at, Attempts: 1},
	}
	for i := 0; i < 5; i++ {
		fs = append(fs, memory.JobFailure{Kind: memory.KindRecap, Key: fmt.Sprint("chat", i), Reason: "r", At: at, Attempts: 1})
	}
	tests := []struct {
		lang string
		want []string
	}{
		{"en", []string{
			"Owed, failing: consolidation of maren|console:local:ada (failures in a row: 3, the last at 2026-12-01T07:00:00Z; next try: 2026-12-01T07:01:20Z). Why: scribe output rejected twice: xxx",
			"Owed, failing: compaction of 01CHAT (failures in a row: 1, the last at 2026-12-01T07:00:00Z; next try: at the next turn or sweep). Why: scribe: timeout",
		}},
		{"zh", []string{"待办、失败中：合并（maren|console:local:ada）——已连续失败 3 次", "下次尝试：下一轮对话或下次巡检时", "复盘（chat2）"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeFailures(&b, fs, func(k msgKey, args ...any) string { return Localized(texts, tt.lang, k, args...) })
		got := b.String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.lang, w, got)
			}
		}
		if lines := strings.Count(got, "\n"); lines != maxShownFailures+1 {
			t.Errorf("%s: %d lines, want %d failures and an ellipsis:\n%s", tt.lang, lines, maxShownFailures, got)
		}
		if strings.Contains(got, strings.Repeat("x", 301)) {
			t.Errorf("%s: a reason was not cut at 300 characters", tt.lang)
		}
	}
}
