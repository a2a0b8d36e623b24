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
	"troupe/models"
)

// storyLines is a scripted story of n beats.
func storyLines(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "Beat %03d: I walk the cliff path again, count the gulls over the water and tell Maren what I saw.\n", i)
	}
	return b.String()
}

// coveredContents returns the contents of every message a summary covers.
func coveredContents(t *testing.T, st *models.Store, sum models.Summary) []string {
	t.Helper()
	var out []string
	for id := sum.CoversThroughID; id != ""; {
		m, err := st.Message(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Content)
		id = m.ParentID
	}
	return out
}

func TestConsoleStoryCompacts(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			scribe := &memorytest.Scribe{Next: func(req openaitest.Request) openaitest.Answer {
				a := openaitest.DefaultResponder(req)
				a.Latency = 50 * time.Millisecond
				return a
			}}
			fake.SetResponder(scribe.Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			// A guard, not a measure: 120 beats under -race on a loaded 2-core
			// machine took over three minutes.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var out, errOut bytes.Buffer
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "30s"},
				strings.NewReader(storyLines(120)), &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chats, _ := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			if len(chats) != 1 {
				t.Fatalf("chats = %d, want 1", len(chats))
			}
			sums, err := st.ChatSummaries(ctx, chats[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) < 3 {
				t.Fatalf("a 120-beat story compacted %d times, want at least 3", len(sums))
			}
			reqs := fake.Requests()
			// Each new summary's prompt carries the previous summary.
			var summaryReqs []openaitest.Request
			for _, r := range reqs {
				if memorytest.Kind(r) == "summary" {
					summaryReqs = append(summaryReqs, r)
				}
			}
			for i := 1; i < len(summaryReqs); i++ {
				prev := fmt.Sprintf("Summary #%d.", i)
				if !strings.Contains(summaryReqs[i].Messages[1].Content, "<previous-summary>\n## Story so far\n"+prev) {
					t.Errorf("summary request %d does not merge %q", i+1, prev)
				}
			}
			// Every turn prompt with a summary has the header, the summary,
			// and none of the messages that summary covers.
			checked := 0
			for _, r := range reqs {
				if memorytest.Kind(r) != "" || len(r.Messages) < 2 || !strings.HasPrefix(r.Messages[1].Content, "[Previously]") {
					continue
				}
				var sum *models.Summary
				for i := range sums {
					if strings.Contains(r.Messages[1].Content, sums[i].Content) {
						sum = &sums[i]
					}
				}
				if sum == nil {
					t.Fatalf("a prompt's previously block matches no stored summary")
				}
				covered := coveredContents(t, st, *sum)
				for _, m := range r.Messages[2:] {
					for _, c := range covered {
						if m.Content == c {
							t.Fatalf("a covered message was sent after compaction: %.60q", c)
						}
					}
				}
				checked++
			}
			if checked < 50 {
				t.Errorf("only %d prompts carried a summary, want most of the story's turns", checked)
			}
			lastReq := reqs[len(reqs)-1]
			for i := len(reqs) - 1; i >= 0 && memorytest.Kind(reqs[i]) != ""; i-- {
				lastReq = reqs[i-1]
			}
			if n := len(lastReq.Messages); n > 2+2*(6+36)+1 {
				t.Errorf("the last prompt has %d messages; compaction should keep it flat", n)
			}

			// /regen at a point before the first summary's cut: that branch
			// never sees the summary.
			chat, err := st.Chat(ctx, chats[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			var chain []models.Message
			for id := sums[0].CoversThroughID; id != ""; {
				m, err := st.Message(ctx, id)
				if err != nil {
					t.Fatalf("walking the first summary's cut back from %s: %v", sums[0].CoversThroughID, err)
				}
				chain = append([]models.Message{m}, chain...)
				id = m.ParentID
			}
			if len(chain) < 5 {
				t.Fatalf("the first summary (of %d) covers %d messages: %+v", len(sums), len(chain), sums[0])
			}
			early := chain[3] // a user message well inside the first cut
			if early.Role != "user" {
				early = chain[4]
			}
			alt := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "An earlier path."}
			if err := st.Append(ctx, chat.ID, chat.HeadID, early.ID, []*models.Message{alt}); err != nil {
				t.Fatal(err)
			}
			before := fake.Count()
			out.Reset()
			err = run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--no-worker"},
				strings.NewReader("/regen\n"), &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("regen run: %v", err)
			}
			reqs = fake.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("regen made %d model requests, want 1", len(reqs))
			}
			for _, m := range reqs[0].Messages[1:] {
				if strings.Contains(m.Content, "[Previously]") || strings.Contains(m.Content, "Summary #") {
					t.Fatalf("a branch forked before the summary's cut saw the summary: %.300q", m.Content)
				}
			}
			if got := reqs[0].Messages[len(reqs[0].Messages)-1].Content; got != early.Content {
				t.Errorf("regen prompt ends with %.40q, want the early user message", got)
			}
		})
	}
}
