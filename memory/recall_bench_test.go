package memory_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"troupe/config"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// processCPU is the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecall measures one turn's recall (cues and words: the index
// search, the load, scoring and MMR) over 10,000 and 100,000 perceptions
// of one character, on each store, and reports its p50, p95 and p99 and the CPU it took.
func BenchmarkRecall(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%dk", be.Name, n/1000), func(b *testing.B) {
				st := testenv.OpenStore(b, be)
				ctx := context.Background()
				if err := st.SeedRecord(ctx, models.SeedSpec{SpaceID: "console:local:ada", Character: "Maren", ChatID: models.NewID(), N: n, Seed: 1}); err != nil {
					b.Fatal(err)
				}
				cfg := memory.RecallConfigFrom(config.Default().Recall, config.Default().Memory)
				questions := []string{"Where is the lamp by the door, and who saw the ship at night?",
					"Ada, do you remember the rope on the sea door?", "What did kalomi say about the renvo?"}
				var times []time.Duration
				cpu0 := processCPU(b)
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					start := time.Now()
					in := memory.RecallInput{Language: "en", SpaceID: "console:local:ada", Character: "Maren",
						ChatID: "this-chat", HeadID: "head", New: []string{questions[i%len(questions)]}}
					found, err := memory.FindRecall(ctx, st, cfg, in)
					if err != nil {
						b.Fatal(err)
					}
					found.Pick(cfg, in)
					times = append(times, time.Since(start))
				}
				cpu := processCPU(b) - cpu0
				slices.Sort(times)
				pct := func(p float64) float64 {
					return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
				}
				b.ReportMetric(pct(0.95), "p95-ms")
				b.ReportMetric(pct(0.5), "p50-ms")
				b.ReportMetric(pct(0.99), "p99-ms")
				// This process's CPU per recall: on SQLite all of it, on
				// PostgreSQL the client's side. On a loaded machine the
				// wall-clock percentiles measure the load as much as recall.
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(times)), "cpu-ms/op")
			})
		}
	}
}
