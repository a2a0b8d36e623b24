package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models/testenv"
	"troupe/record"
)

// memory.fading reaches the recorder: with fading on (the default) its
// request leaves out the sentence asking for accurate perceptions only, so
// the model may write partial and mistaken ones; with fading off the
// request carries it. The memory service is built from the config file's
// memory section as cmd/troupe builds it.
func TestRecorderAsksForExactPerceptionsOnlyWithoutFading(t *testing.T) {
	exact := strings.TrimPrefix(record.Prompt("en", record.Input{})[0].Content, record.Prompt("en", record.Input{Fading: true})[0].Content)
	if strings.TrimSpace(exact) == "" {
		t.Fatal("the recorder prompt has no sentence that fading off adds")
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newRecordRig(t, b, 100)
			client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
			for _, fading := range []bool{true, false} {
				ch := fmt.Sprintf("fading-%v", fading)
				for i := 1; i <= 3; i++ {
					r.say(t, ch, i, "Ada", fmt.Sprintf(`*I hand Maren lamp wick number %d.* "Keep it dry."`, i))
				}
				mc := config.Default().Memory
				mc.Fading = fading
				svc := memory.NewService(r.st, llm.Scribe{C: client, JSON: true}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
				from := len(r.fake.Requests())
				res, err := svc.Record(context.Background(), r.chat(t, ch).ID)
				if err != nil || res.Outcome != memory.Written {
					t.Fatalf("fading %v: record: %+v, %v", fading, res, err)
				}
				var sys []string
				for _, q := range r.fake.Requests()[from:] {
					if memorytest.Kind(q) == "record" {
						sys = append(sys, q.Messages[0].Content)
					}
				}
				if len(sys) != 1 {
					t.Fatalf("fading %v: %d recorder requests, want 1", fading, len(sys))
				}
				if got := strings.Contains(sys[0], strings.TrimSpace(exact)); got == fading {
					t.Errorf("fading %v: the recorder is asked for accurate perceptions only: %v, want %v", fading, got, !fading)
				}
			}
		})
	}
}
