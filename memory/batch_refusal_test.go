package memory_test

import (
	"context"
	"strings"
	"testing"

	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/prompt"
)

// TestRefusalAfterAnotherJobLoweredTheLimit: two jobs of the service send
// prompts side by side to a scribe that refuses what is longer than its
// window and does not say how long that is. The other job's refusal has
// lowered the service's limit below half of this job's prompt by the time
// this one is refused too; this job still asks again with a batch under
// the new limit and gets its answer, instead of failing as if no smaller
// batch could be asked for (it did, once in CI: a compaction failed with
// "context_length" just after the recorder halved its batch, and the chat
// went without a summary).
func TestRefusalAfterAnotherJobLoweredTheLimit(t *testing.T) {
	counter, err := prompt.NewTokenCounter(prompt.EncodingO200K)
	if err != nil {
		t.Fatal(err)
	}
	fake := openaitest.NewServer(t)
	const window = 1500
	fake.SetPromptTokenCounter(counter.Count)
	fake.SetContextWindow(window, false)
	scribe := llm.Scribe{C: llm.New(llm.Config{BaseURL: fake.URL(), Model: "scribe", MaxRetries: -1}, nil)}
	s := memory.NewService(nil, scribe, memory.Config{ContextWindow: 16384}, nil)

	unit := strings.Repeat("The lighthouse keeper counts the ships that pass at night. ", 6)
	build := func(k int) ([]prompt.Message, string) {
		material := strings.Repeat(unit, k)
		return []prompt.Message{{Role: prompt.RoleUser, Content: "Summarize:\n" + material}}, material
	}
	refused, other := 0, false
	call := func(msgs []prompt.Message) (string, error) {
		out, err := scribe.Complete(context.Background(), msgs)
		if memory.IsTooLong(err) {
			refused++
			if !other {
				// Meanwhile the other job was refused a shorter prompt and
				// lowered the limit further than this refusal will.
				other = true
				s.LowerCeiling(memory.PromptTokens(msgs)/2 - 100)
			}
		}
		return out, err
	}
	const units = 80
	whole, _ := build(units)
	if n := memory.PromptTokens(whole); n < 2*window {
		t.Fatalf("the whole work is %d tokens; want it well over the %d-token window", n, window)
	}
	_, k, err := memory.AskBatch(s, units, build, call)
	if err != nil {
		t.Fatalf("asked after the other job's refusal: %v (refused %d times, limit %d)", err, refused, s.CallLimit())
	}
	answered, _ := build(k)
	if k < 1 || k >= units || counter.Count(answered[0].Content) > window {
		t.Errorf("answered a batch of %d units; want a part of the %d that fits the %d-token window", k, units, window)
	}
	if refused < 1 {
		t.Errorf("the scribe refused %d prompts; the test needs the first one refused", refused)
	}
}
