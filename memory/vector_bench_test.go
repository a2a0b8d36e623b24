package memory_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// BenchmarkVectorRecall measures the vector path's own time in a turn, the
// embeddings call excluded: bringing the character's cached vectors up to
// date (one index probe) and the similarity search over all of them, at
// 10,000 and 100,000 vectors of 256 dimensions of one character, on each
// store; it reports p95 and p99 of the wall time and the CPU time per
// search.
func BenchmarkVectorRecall(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%dk", be.Name, n/1000), func(b *testing.B) {
				st := testenv.OpenStore(b, be)
				ctx := context.Background()
				chat := models.NewID()
				// The sizes share the backend's database: each has its own
				// character.
				char := fmt.Sprintf("Maren%d", n)
				if err := st.SeedRecord(ctx, models.SeedSpec{SpaceID: cacheSpace, Character: char, ChatID: chat, N: n, Seed: 1}); err != nil {
					b.Fatal(err)
				}
				writeVectors(b, st, chat, n, 256)
				cache := memory.NewVectorCache(st, "m", 1<<30)
				if err := cache.Load(ctx, cacheSpace, char); err != nil {
					b.Fatal(err)
				}
				queries := [][]float32{openaitest.Embedding("lamp", 256), openaitest.Embedding("door", 256), openaitest.Embedding("ship", 256)}
				var times []time.Duration
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					start := time.Now()
					if _, err := cache.Nearest(ctx, cacheSpace, char, queries[i%len(queries)], 50, memory.DefaultMinSimilarity); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				// On a shared machine the wall time measures the neighbours
				// too; the process's CPU time per search does not.
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(times)), "cpu-ms/op")
				slices.Sort(times)
				pct := func(p float64) float64 {
					return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
				}
				b.ReportMetric(pct(0.95), "p95-ms")
				b.ReportMetric(pct(0.99), "p99-ms")
				b.ReportMetric(float64(cache.Bytes())/(1<<20), "cache-MiB")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
