package memory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// TestRecapEvidenceCapIsTheConfiguredOne: memory.recap_max_chars caps the
// transcript a recap is written from at the configured value, on both
// databases; the same chat under the default cap is sent whole (the positive
// control that the omission would be seen).
func TestRecapEvidenceCapIsTheConfiguredOne(t *testing.T) {
	t.Parallel()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			client := llm.New(llm.Config{BaseURL: w.fake.URL(), Model: "m", Timeout: 2 * time.Second, MaxRetries: -1}, nil)
			paragraph := strings.Repeat("The rain keeps falling on the inn's roof. ", 10)
			for _, id := range []string{"jA", "jB"} {
				head := id + "-m1"
				for i := range 4 {
					role := []string{"user", "assistant"}[i%2]
					msg := &models.Message{Role: role, AuthorName: map[string]string{"user": "Traveler", "assistant": "Qingwu"}[role], Content: paragraph + "\n\n" + paragraph}
					must(t, w.st.Append(ctx, id, head, head, []*models.Message{msg}))
					head = msg.ID
				}
			}
			recapOf := func(mc config.Memory, chatID string) string {
				t.Helper()
				mem := memory.NewService(w.st, llm.Scribe{C: client}, memory.ConfigFrom(mc, "en"), nil)
				res, err := mem.Recap(ctx, chatID)
				if err != nil || res.Outcome != memory.Written {
					t.Fatalf("recap %s: %+v, %v", chatID, res, err)
				}
				req, ok := w.fake.Last()
				if !ok || memorytest.Kind(req) != "recap" || len(req.Messages) != 2 {
					t.Fatalf("recap %s: the last request is not a recap: %+v", chatID, req)
				}
				return req.Messages[1].Content
			}

			whole := recapOf(config.Default().Memory, "jB")
			if strings.Contains(whole, "left out for length") || strings.Count(whole, paragraph) != 8 {
				t.Fatalf("under the default cap the transcript should go whole (8 paragraphs), got %d:\n%s", strings.Count(whole, paragraph), whole)
			}

			small := config.Default().Memory
			small.RecapMaxChars = 1000
			capped := recapOf(small, "jA")
			if !strings.Contains(capped, "left out for length") {
				t.Errorf("recap_max_chars 1000 did not leave the early transcript out:\n%s", capped)
			}
			start := strings.Index(capped, "<conversation")
			end := strings.Index(capped, "</conversation>")
			if start < 0 || end < start {
				t.Fatalf("no conversation in the recap request:\n%s", capped)
			}
			if n := len([]rune(capped[strings.Index(capped[start:], ">")+start+1 : end])); n > 1000+2 || n < 400 {
				t.Errorf("the capped transcript is %d characters, want at most 1000 and not near empty", n)
			}
		})
	}
}
