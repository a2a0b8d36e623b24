package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/prompt"
)

// promptTokens is how the fake counts a request against its window.
func promptTokens(c *prompt.TokenCounter, req openaitest.Request) int {
	contents := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		contents[i] = m.Content
	}
	return c.Count(strings.Join(contents, "\n"))
}

// waitJob waits for the job record of kind and key to have an outcome in want.
func (r *rig) waitJob(t *testing.T, kind, key string, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rec, err := r.st.Job(context.Background(), kind, key)
		if err == nil {
			for _, w := range want {
				if rec.Outcome == w {
					return rec.Reason
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s %s: %+v (%v), want outcome in %v", kind, key, rec, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A compaction whose cut is larger than what the scribe's endpoint takes
// (it refuses at 1,200 tokens and does not say so) relays it batch by
// batch: each summary merges the one before, and together they cover the
// whole cut.
func TestCompactionRelaysInBatches(t *testing.T) {
	counter, err := prompt.NewTokenCounter(prompt.EncodingO200K)
	must(t, err)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 80)
			r.fake.SetPromptTokenCounter(counter.Count)
			r.fake.SetContextWindow(1200, false)
			stop := r.startWorker(t)
			defer stop()
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			r.waitSummaries(t, 1)
			must(t, r.queue.Drain(context.Background(), 30*time.Second))
			sums, err := r.st.ChatSummaries(context.Background(), r.chatID)
			must(t, err)
			if len(sums) < 3 {
				t.Fatalf("%d summaries, want the 74-beat cut relayed in at least 3 batches", len(sums))
			}
			last := sums[len(sums)-1]
			if last.Beats != 74 {
				t.Errorf("the last summary covers %d beats, want all 74 of the cut", last.Beats)
			}
			for i := 1; i < len(sums); i++ {
				if !strings.Contains(sums[i].Content, "Merged: Summary #") {
					t.Errorf("summary %d does not merge the one before:\n%s", i+1, sums[i].Content)
				}
			}
			for _, req := range r.fake.Requests() {
				if n := promptTokens(counter, req); req.Path == "/v1/chat/completions" && n > 1200 && memoryKindOf(req) != "summary" {
					t.Errorf("a %d-token prompt that is not a summary's", n)
				}
			}
		})
	}
}

func memoryKindOf(req openaitest.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	if strings.Contains(req.Messages[0].Content, memory.SummaryHeadings["en"][0]) {
		return "summary"
	}
	return "other"
}

// An endpoint that refuses even one beat as too long: each refusal halves
// the prompt, every size is tried once, and then the job fails with the
// refusal's kind and the work stays owed (no summary).
func TestRefusedCompactionHalvesOncePerSize(t *testing.T) {
	counter, err := prompt.NewTokenCounter(prompt.EncodingO200K)
	must(t, err)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newRig(t, b, 80)
			r.fake.SetPromptTokenCounter(counter.Count)
			r.fake.SetContextWindow(300, false)
			stop := r.startWorker(t)
			defer stop()
			must(t, r.queue.Compact(context.Background(), r.chatID, false))
			reason := r.waitJob(t, memory.KindCompact, r.chatID, string(memory.Failed))
			if !strings.HasPrefix(reason, memory.FaultTooLong) {
				t.Errorf("job reason %q, want the context-length refusal", reason)
			}
			var sizes []int
			for _, req := range r.fake.Requests() {
				if req.Path == "/v1/chat/completions" {
					sizes = append(sizes, promptTokens(counter, req))
				}
			}
			if len(sizes) < 3 {
				t.Fatalf("prompt sizes %v: want the batch halved after each refusal", sizes)
			}
			for i := 1; i < len(sizes); i++ {
				if sizes[i] >= sizes[i-1] {
					t.Fatalf("prompt sizes %v: a size was tried again or grew", sizes)
				}
			}
			if sums, _ := r.st.ChatSummaries(context.Background(), r.chatID); len(sums) != 0 {
				t.Errorf("%d summaries installed from refused prompts", len(sums))
			}
		})
	}
}
