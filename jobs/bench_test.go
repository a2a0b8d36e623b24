package jobs_test

import (
	"context"
	"testing"

	"troupe/jobs"
	"troupe/models/testenv"
)

// BenchmarkEnqueueAlreadyQueued is what a turn costs the queue while its
// chat's compaction is already waiting (the common case once the trigger
// holds): the enqueue meets the task's id and looks at the task's state.
func BenchmarkEnqueueAlreadyQueued(b *testing.B) {
	urls := map[string]string{"embedded": ""}
	if testenv.Available() {
		urls["redis-server"] = testenv.FreshRedisURL(b)
	}
	for name, url := range urls {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			r, err := jobs.OpenRedis(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			q := jobs.NewQueue(r, nil)
			if err := q.Compact(ctx, "chat", false); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := q.Compact(ctx, "chat", false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
