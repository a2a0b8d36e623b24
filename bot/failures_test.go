package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/memory"
)

// TestWriteFailuresNamesEachOwedJob: /memory names each failing job, and
// never its reason (a provider's error or a quote of the story): the
// owner's report names the key, a group's only the kind.
func TestWriteFailuresNamesEachOwedJob(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	fs := []memory.JobFailure{
		{Kind: memory.KindConsolidate, Key: "maren|console:local:ada", Reason: "scribe output rejected twice: " + strings.Repeat("x", 400), At: at, Attempts: 3, NextTry: at.Add(80 * time.Second)},
		{Kind: memory.KindCompact, Key: "01CHAT", Reason: "scribe: POST https://llm.example/v1?key=sk-secret: timeout", At: at, Attempts: 1},
	}
	for i := 0; i < 5; i++ {
		fs = append(fs, memory.JobFailure{Kind: memory.KindRecap, Key: fmt.Sprint("chat", i), Reason: "r", At: at, Attempts: 1})
	}
	tests := []struct {
		lang  string
		whole bool
		want  []string
	}{
		{"en", true, []string{
			"Owed, failing: consolidation of maren|console:local:ada (failures in a row: 3, the last at 2026-12-01T07:00:00Z; next try: 2026-12-01T07:01:20Z). Why is for the operator: the log, or troupe memory show.",
			"Owed, failing: compaction of 01CHAT (failures in a row: 1, the last at 2026-12-01T07:00:00Z; next try: at the next turn or sweep).",
		}},
		{"zh", true, []string{"待办、失败中：合并（maren|console:local:ada）——已连续失败 3 次", "下次尝试：下一轮对话或下次巡检时", "复盘（chat2）"}},
		{"en", false, []string{
			"Owed, failing: consolidation (failures in a row: 3, the last at 2026-12-01T07:00:00Z; next try: 2026-12-01T07:01:20Z).",
			"Owed, failing: compaction (failures in a row: 1, the last at 2026-12-01T07:00:00Z; next try: at the next turn or sweep).",
		}},
		{"zh", false, []string{"待办、失败中：合并——已连续失败 3 次", "下次尝试：下一轮对话或下次巡检时"}},
	}
	cm := &commands{p: &Pipeline{}}
	for _, tt := range tests {
		var b strings.Builder
		cm.writeFailures(&b, tt.lang, fs, tt.whole)
		got := b.String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s (whole %v): output lacks %q:\n%s", tt.lang, tt.whole, w, got)
			}
		}
		if lines := strings.Count(got, "\n"); lines != maxShownFailures+1 {
			t.Errorf("%s: %d lines, want %d failures and an ellipsis:\n%s", tt.lang, lines, maxShownFailures, got)
		}
		for _, secret := range []string{"rejected", "xxx", "sk-secret", "timeout"} {
			if strings.Contains(got, secret) {
				t.Errorf("%s (whole %v): a failure's reason is shown (%q):\n%s", tt.lang, tt.whole, secret, got)
			}
		}
		if !tt.whole && (strings.Contains(got, "01CHAT") || strings.Contains(got, "console:local")) {
			t.Errorf("%s: a group is shown the failing jobs' keys:\n%s", tt.lang, got)
		}
	}
}
