package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/models/testenv"
)

// TestWorkerRunsConcurrentJobs: limits.concurrent_jobs sets how many memory
// jobs troupe worker runs at once.
func TestWorkerRunsConcurrentJobs(t *testing.T) {
	for _, tc := range []struct{ set, want string }{{"", "concurrency=4"}, {"7", "concurrency=7"}} {
		t.Run("concurrent_jobs="+tc.set, func(t *testing.T) {
			dir := t.TempDir()
			vals := map[string]string{"TROUPE_CARDS_DIR": dir, "TROUPE_DATABASE_DSN": "sqlite://" + filepath.Join(dir, "t.db"),
				"TROUPE_OPS_LISTEN": "", "TROUPE_LOG_LEVEL": "info"}
			if tc.set != "" {
				vals["TROUPE_LIMITS_CONCURRENT_JOBS"] = tc.set
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out testenv.Buffer
			done := make(chan error, 1)
			go func() { done <- run(ctx, []string{"worker"}, strings.NewReader(""), &out, &out, testEnv(vals)) }()
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(out.String(), "worker started") {
				select {
				case err := <-done:
					t.Fatalf("troupe worker ended before it started: %v\n%s", err, out.String())
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("troupe worker did not start:\n%s", out.String())
				}
			}
			cancel()
			<-done
			var line string
			for l := range strings.SplitSeq(out.String(), "\n") {
				if strings.Contains(l, "worker started") {
					line = l
				}
			}
			if !strings.Contains(line, tc.want) {
				t.Errorf("worker started with %q; want %s", line, tc.want)
			}
		})
	}
}
