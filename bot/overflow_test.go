package bot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/prompt"
)

// TestPromptNeverOverflows plays a story in a small context window: the
// pipeline drops the oldest uncovered beats (never the last keep), asks for
// an urgent compaction, and never sends a request over the window.
func TestPromptNeverOverflows(t *testing.T) {
	const window, reply = 2048, 256
	r := newRigWith(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"), nil, window)
	counter, err := prompt.NewTokenCounter("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	r.fake.SetPromptTokenCounter(counter.Count)
	ctx := context.Background()
	for beat := 1; beat <= 40; beat++ {
		s := &discardSink{}
		if err := handle(ctx, r.p, inbound("small", beat), s); err != nil {
			t.Fatal(err)
		}
		if len(s.notices) > 0 {
			t.Fatalf("beat %d: %v", beat, s.notices)
		}
	}
	turns := 0
	for _, req := range r.fake.Requests() {
		if memorytest.Kind(req) != "" {
			continue
		}
		turns++
		// Count as the (fake) API does: its usage is the truth the
		// pipeline calibrates against.
		var contents, users []string
		for _, m := range req.Messages {
			contents = append(contents, m.Content)
			if m.Role == "user" && strings.HasPrefix(m.Content, "Beat ") {
				users = append(users, m.Content)
			}
		}
		if n := counter.Count(strings.Join(contents, "\n")); n > window-reply {
			t.Errorf("turn %d sent %d tokens, over %d", turns, n, window-reply)
		}
		// The last keep (6) beats are always there.
		want := min(turns, 6)
		if len(users) < want {
			t.Errorf("turn %d carries %d beats, want at least %d", turns, len(users), want)
		}
		if last := users[len(users)-1]; !strings.HasPrefix(last, fmt.Sprintf("Beat %d:", turns)) {
			t.Errorf("turn %d ends with %.12q", turns, last)
		}
	}
	if turns != 40 {
		t.Fatalf("%d turns reached the model, want 40", turns)
	}
	ch, _ := r.st.Channel(ctx, "console:small")
	sums, _ := r.st.ChatSummaries(ctx, ch.CurrentChatID)
	if len(sums) == 0 {
		t.Errorf("an overflowing story was never compacted")
	}
}

func openaitestFault500() openaitest.Answer { return openaitest.Answer{Fault: openaitest.Fault500} }
