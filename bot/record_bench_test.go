package bot_test

import (
	"fmt"
	"sync"
	"testing"

	"troupe/llm/openaitest"
	"troupe/memory"
	"troupe/memory/memorytest"
	"troupe/models/testenv"
)

// BenchmarkSideTraffic plays a 200-beat one-card story with the recorder on
// (batch 6) and compaction as configured by default, and reports the tokens
// (prompt + completion, o200k) of the side model — compaction, recap,
// consolidation, recorder — against the roleplay's, and the recorder's
// tokens per turn.
func BenchmarkSideTraffic(b *testing.B) {
	counter, err := memory.NewTokenCounter("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	for n := 0; n < b.N; n++ {
		be := testenv.Backends(b)[0]
		r := newRecordRigTB(b, be, 6)
		var mu sync.Mutex
		tokens := map[string]int{}
		r.scribe.Next = func(req openaitest.Request) openaitest.Answer {
			return openaitest.Answer{Text: fmt.Sprintf(`*Maren sets down the lamp and looks at the sea for a while.* "The light has to burn until dawn, %d nights more," she says. *She counts the oil jars on the shelf.* "Ask me about my brother another time."`, len(req.Messages))}
		}
		r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
			a := r.scribe.Respond(req)
			kind := memorytest.Kind(req)
			if kind == "" {
				kind = "roleplay"
			}
			n := counter.Count(a.Text)
			for _, m := range req.Messages {
				n += 4 + counter.Count(m.Content)
			}
			mu.Lock()
			tokens[kind] += n
			mu.Unlock()
			return a
		})
		for beat := 1; beat <= 200; beat++ {
			r.sayTB(b, "side", beat, "Ada", fmt.Sprintf(`*I climb to the lamp room, step %d.* "Maren, what did you see on the water tonight?"`, beat))
		}
		mu.Lock()
		side := tokens["summary"] + tokens["recap"] + tokens["consolidate"] + tokens["record"]
		b.ReportMetric(float64(side)/float64(tokens["roleplay"]), "side/roleplay")
		b.ReportMetric(float64(tokens["record"])/200, "recorder-tokens/turn")
		b.ReportMetric(float64(r.scribe.Count("record")), "recorder-calls")
		b.ReportMetric(float64(tokens["summary"])/float64(tokens["roleplay"]), "compaction/roleplay")
		mu.Unlock()
	}
}

// BenchmarkTurnRecorder measures a whole turn (the fake model answers at
// once) with the recorder off and on (plain events and presence written
// with the turn, the scene read; the recorder itself never due), on SQLite
// and PostgreSQL.
func BenchmarkTurnRecorder(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/recorder=%v", be.Name, on), func(b *testing.B) {
				dsn := "sqlite://" + b.TempDir() + "/t.db"
				if be.Name == "postgres" {
					dsn = testenv.FreshPostgresDB(b)
				}
				r := newRecordRigCard(b, testenv.Backend{Name: be.Name, DSN: dsn}, 1<<20, nil)
				if !on {
					r.p = r.withoutRecorder(b)
				}
				text := `*I climb to the lamp room.* "Maren, what did you see on the water tonight?" *I wait.*`
				r.sayTB(b, "t", 0, "Ada", text)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r.sayTB(b, "t", i+1, "Ada", text)
				}
			})
		}
	}
}
