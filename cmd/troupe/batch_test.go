package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// longBeats is a console story of n user lines of exactly size characters,
// each with a fact of its own.
func longBeats(n, size int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		line := fmt.Sprintf("Beat %03d: I climb to the lamp room, note that the brass plate number %d is loose, and tell Maren about the gulls, the tide and the boat I saw", i, 4000+i)
		for len(line) < size {
			line += " and the rain"
		}
		b.WriteString(line[:size])
		b.WriteString("\n")
	}
	return b.String()
}

// scribeTraffic counts the chat requests a scribe endpoint with a window
// got: the ones it took and the ones it refused as too long (prompt and
// asked-for answer over the window), and the largest it took.
func scribeTraffic(reqs []openaitest.Request, window int, count func(string) int) (took, refused, largest int) {
	for _, req := range reqs {
		if req.Path != "/v1/chat/completions" {
			continue
		}
		contents := make([]string, len(req.Messages))
		for i, m := range req.Messages {
			contents[i] = m.Content
		}
		n := count(strings.Join(contents, "\n")) + max(req.MaxTokens, req.MaxCompletionTokens)
		if n > window {
			refused++
			continue
		}
		took++
		largest = max(largest, n)
	}
	return took, refused, largest
}

// A scribe whose window is far smaller than a console story's backlog:
// the summaries are installed batch by batch, every prompt the scribe
// takes fits its window, and the recorder and reflection catch up, with
// no memory job left failing. Once with an endpoint that reports its
// window in its model list (no prompt is refused), once with one that
// says nothing and refuses at 8k tokens (the refusals halve the batch).
func TestBoundedBatchesConsole(t *testing.T) {
	counter, err := prompt.NewTokenCounter(prompt.EncodingO200K)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		window   int
		report   bool
		refusals bool
	}{
		// 3,000 tokens: about 12,000 characters of English.
		{name: "reported-12k-chars", window: 3000, report: true},
		{name: "silent-8k-tokens", window: 8000, refusals: true},
	}
	for _, tc := range cases {
		for name, vals := range backends(t) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				actor := openaitest.NewServer(t)
				scribeFake := openaitest.NewServer(t)
				scribeFake.SetPromptTokenCounter(counter.Count)
				scribeFake.SetContextWindow(tc.window, tc.report)
				scribeFake.SetResponder(memorytest.Reflecting(&memorytest.Scribe{}))
				vals["TROUPE_MODEL_BASE_URL"] = actor.URL()
				vals["TROUPE_SCRIBE_BASE_URL"] = scribeFake.URL()
				vals["TROUPE_CARDS_DIR"] = t.TempDir()
				vals["TROUPE_LOG_LEVEL"] = "warn"
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				var out, errOut bytes.Buffer
				err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "60s"},
					strings.NewReader(longBeats(45, 350)+"/reflect\n/new\n"), &out, &errOut, testEnv(vals))
				if err != nil {
					t.Fatalf("run: %v\n%s", err, errOut.String())
				}
				st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				// The story's chat, ended by /new, and the new empty one.
				chats, _ := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
				if len(chats) != 2 {
					t.Fatalf("chats = %d, want 2", len(chats))
				}
				var chatID string
				var sums []models.Summary
				for _, c := range chats {
					s, err := st.ChatSummaries(ctx, c.ID)
					if err != nil {
						t.Fatal(err)
					}
					if len(s) > len(sums) {
						chatID, sums = c.ID, s
					}
				}

				// Summaries installed: the story's compaction was cut
				// into batches, each one a summary of its own.
				if len(sums) < 2 {
					var jobs []string
					for _, c := range chats {
						job, jerr := st.Job(ctx, memory.KindCompact, c.ID)
						jobs = append(jobs, fmt.Sprintf("%s: %+v (%v)", c.ID, job, jerr))
					}
					t.Fatalf("%d summaries of a 45-beat story through a small window, want the cut relayed in batches; compaction jobs %q; the scribe took %d requests; log:\n%s",
						len(sums), jobs, len(scribeFake.Requests()), errOut.String())
				}
				if job, err := st.Job(ctx, memory.KindCompact, chatID); err != nil || job.Outcome == string(memory.Failed) {
					t.Errorf("compaction job %+v (%v), want not failing", job, err)
				}

				// Prompts bounded: every prompt the scribe took fits
				// its window with its answer.
				took, refused, largest := scribeTraffic(scribeFake.Requests(), tc.window, counter.Count)
				if took == 0 || largest > tc.window {
					t.Errorf("the scribe took %d prompts, the largest %d tokens with its answer, window %d", took, largest, tc.window)
				}
				if !tc.refusals && refused > 0 {
					t.Errorf("the scribe refused %d prompts although it reports its window", refused)
				}
				if tc.refusals && refused == 0 {
					t.Errorf("no prompt was refused: the case does not test the halving")
				}
				t.Logf("scribe took %d prompts (largest %d tokens with answer), refused %d; %d summaries", took, largest, refused, len(sums))

				// The recorder caught up: nothing owed is left unsealed.
				b, err := st.RecordBatch(ctx, chatID)
				if err != nil {
					t.Fatal(err)
				}
				if len(b.Events) > 0 {
					t.Errorf("%d events still unsealed after the drain", len(b.Events))
				}
				for _, kind := range []string{memory.KindRecord, memory.KindRecap} {
					if job, err := st.Job(ctx, kind, chatID); err != nil || job.Outcome == string(memory.Failed) {
						t.Errorf("%s job %+v (%v), want not failing", kind, job, err)
					}
				}
				key := models.MemoryJobKey(chats[0].CardID, chats[0].SpaceID)
				if job, err := st.Job(ctx, memory.KindConsolidate, key); err != nil || job.Outcome != string(memory.Written) {
					t.Errorf("consolidation job %+v (%v), want written", job, err)
				}
				// Reflection caught up: it ran and formed a belief.
				rs, err := st.ReflectionState(ctx, chatID)
				if err != nil || rs.LastSeq == 0 {
					t.Errorf("reflection state %+v (%v), want a run", rs, err)
				}
				beliefs, err := st.Beliefs(ctx, chats[0].SpaceID, "")
				if err != nil || len(beliefs) == 0 {
					t.Errorf("beliefs %d (%v), want at least one\n%s", len(beliefs), err, out.String())
				}
			})
		}
	}
}
