package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models/testenv"
	"troupe/prompt"
)

// reflectingJobs is recordJobs with automatic reflection after each
// recorder run that wrote, as cmd/troupe's worker runs it.
type reflectingJobs struct {
	recordJobs
	mem *memory.Service
}

func (j reflectingJobs) Record(ctx context.Context, chatID string, now bool) error {
	res, err := j.mem.Record(ctx, chatID)
	if err != nil || res.Outcome != memory.Written {
		return err
	}
	_, err = j.mem.Reflect(ctx, chatID, false)
	return err
}

// storyDays gives a recorder answer of the fake (a story day per turn) a
// story clock that moves six minutes a turn, 150 turns a day: a day
// passing is a scene change that starts a reflection, and a story does not
// pass a day every turn.
func storyDays(answer string) string {
	var a map[string]any
	if json.Unmarshal([]byte(answer), &a) != nil {
		return answer
	}
	turns, _ := a["turns"].([]any)
	for _, t := range turns {
		t := t.(map[string]any)
		n := int(t["turn"].(float64))
		t["story_time"] = map[string]int{"day": 1 + n/150, "minute": 300 + n%150*6}
	}
	out, _ := json.Marshal(a)
	return string(out)
}

// BenchmarkSideTraffic plays a 200-beat one-card story with the recorder on
// (batch 6), compaction and reflection as configured by default, and
// reports the tokens (prompt + completion, o200k) of the side model against
// the roleplay's: side/roleplay is issue 15's figure (compaction, recap,
// consolidation, recorder), reflection/roleplay what reflection (belief
// checks included; the fake finds every belief compatible) adds on top; and
// the recorder's tokens per turn and calls. The fake recorder's story clock
// moves as a story's would (storyDays), so reflection runs every
// reflection.every_turns turns, not at every batch.
func BenchmarkSideTraffic(b *testing.B) {
	counter, err := prompt.NewTokenCounter("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	for n := 0; n < b.N; n++ {
		be := testenv.Backends(b)[0]
		r := newRecordRigTB(b, be, 6)
		dc := config.Default()
		mc := memory.ConfigFrom(dc.Memory, "en")
		mc.Reflect = memory.ReflectConfigFrom(dc.Reflection)
		client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
		mem := memory.NewService(r.st, llm.Scribe{C: client, JSON: true}, mc, slog.New(slog.DiscardHandler))
		opt := r.opt
		opt.Memory, opt.Jobs = mem, reflectingJobs{recordJobs: recordJobs{mem: mem, runs: &r.runs}, mem: mem}
		r.p = bot.New(opt)
		var mu sync.Mutex
		tokens, requests := map[string]int{}, map[string]int{}
		r.scribe.Next = func(req openaitest.Request) openaitest.Answer {
			return openaitest.Answer{Text: fmt.Sprintf(`*Maren sets down the lamp and looks at the sea for a while.* "The light has to burn until dawn, %d nights more," she says. *She counts the oil jars on the shelf.* "Ask me about my brother another time."`, len(req.Messages))}
		}
		r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
			var a openaitest.Answer
			kind := memorytest.Kind(req)
			switch {
			case memorytest.IsReflection(req):
				kind, a = "reflect", openaitest.Answer{Text: memorytest.FaithfulReflection(req)}
			case memorytest.IsBeliefCheck(req):
				kind, a = "check", openaitest.Answer{Text: `{"compatible": true, "against": []}`}
			case kind == "record":
				a = openaitest.Answer{Text: storyDays(r.scribe.Respond(req).Text)}
			default:
				a = r.scribe.Respond(req)
			}
			if kind == "" {
				kind = "roleplay"
			}
			n := counter.Count(a.Text)
			for _, m := range req.Messages {
				n += 4 + counter.Count(m.Content)
			}
			mu.Lock()
			tokens[kind] += n
			requests[kind]++
			mu.Unlock()
			return a
		})
		for beat := 1; beat <= 200; beat++ {
			r.sayTB(b, "side", beat, "Ada", fmt.Sprintf(`*I climb to the lamp room, step %d.* "Maren, what did you see on the water tonight?"`, beat))
		}
		mu.Lock()
		reflections := requests["reflect"]
		side := tokens["summary"] + tokens["recap"] + tokens["consolidate"] + tokens["record"]
		b.ReportMetric(float64(side)/float64(tokens["roleplay"]), "side/roleplay")
		b.ReportMetric(float64(tokens["record"])/200, "recorder-tokens/turn")
		b.ReportMetric(float64(r.scribe.Count("record")), "recorder-calls")
		b.ReportMetric(float64(tokens["summary"])/float64(tokens["roleplay"]), "compaction/roleplay")
		b.ReportMetric(float64(tokens["reflect"]+tokens["check"])/float64(tokens["roleplay"]), "reflection/roleplay")
		b.ReportMetric(float64(reflections), "reflection-requests")
		b.ReportMetric(float64(tokens["reflect"])/float64(max(reflections, 1)), "reflection-tokens/request")
		b.ReportMetric(float64(requests["check"]), "belief-checks")
		b.ReportMetric(float64(tokens["check"])/float64(max(requests["check"], 1)), "check-tokens/request")
		if reflections == 0 {
			b.Fatal("no reflection ran in 200 beats")
		}
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
