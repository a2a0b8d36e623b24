package ops_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"troupe/models"
	"troupe/models/testenv"
	"troupe/ops"
)

// The failing gauge counts the keys whose last memory job failed, read from
// the job table at each scrape, and falls back when a job succeeds.
func TestMetricsCountFailingMemoryJobs(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := testenv.OpenStore(t, b)
			ctx := context.Background()
			m := ops.NewMetrics(nil, st)
			srv := ops.NewServer("127.0.0.1:0", m, nil, slog.New(slog.DiscardHandler))
			scrape := func() string {
				t.Helper()
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				body, _ := io.ReadAll(rec.Body)
				return string(body)
			}
			for _, r := range []models.JobRecord{
				{Kind: "compact", Key: "chat-a", Outcome: "failed", Reason: "x"},
				{Kind: "compact", Key: "chat-b", Outcome: "failed", Reason: "x"},
				{Kind: "consolidate", Key: "card|space", Outcome: "failed", Reason: "x"},
				{Kind: "recap", Key: "chat-a", Outcome: "written", Product: "r1"},
			} {
				if err := st.RecordJob(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			body := scrape()
			for _, want := range []string{
				`troupe_memory_jobs_failing{kind="compact"} 2`,
				`troupe_memory_jobs_failing{kind="consolidate"} 1`,
				`troupe_memory_jobs_failing{kind="recap"} 0`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics lack %s:\n%s", want, grep(body, "troupe_memory_jobs_failing"))
				}
			}
			if err := st.RecordJob(ctx, models.JobRecord{Kind: "compact", Key: "chat-a", Outcome: "written", Product: "s1"}); err != nil {
				t.Fatal(err)
			}
			if body := scrape(); !strings.Contains(body, `troupe_memory_jobs_failing{kind="compact"} 1`) {
				t.Errorf("after a success the gauge did not fall:\n%s", grep(body, "troupe_memory_jobs_failing"))
			}
		})
	}
}

func grep(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
