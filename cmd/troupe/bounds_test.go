package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/models"
)

// TestLongCardFileNameAndUser: a card file name over the id column and a
// 100-character --user used to exit on PostgreSQL only, with a raw "value
// too long for type character varying(64)". Now both databases play the
// chat under stable stand-in ids, and a second run finds the same chat.
func TestLongCardFileNameAndUser(t *testing.T) {
	user := strings.Repeat("Adalind-", 13)[:100]
	data, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	cardPath := filepath.Join(t.TempDir(), "the-keeper-of-the-lantern-on-the-northern-breakwater-of-port-aldous-v2.json")
	if err := os.WriteFile(cardPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i, line := range []string{"Hello there.", "Do you remember me?"} {
				var out, errOut bytes.Buffer
				err := run(ctx, []string{"chat", "--card", cardPath, "--user", user, "--drain-timeout", "5s"},
					strings.NewReader(line+"\n"), &out, &errOut, testEnv(vals))
				if err != nil {
					t.Fatalf("run %d: %v\nstderr: %s", i, err, errOut.String())
				}
				if !strings.Contains(out.String(), "You said \""+line+"\"") {
					t.Fatalf("run %d: no reply in output:\n%s\nstderr: %s", i, out.String(), errOut.String())
				}
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var channels []models.Channel
			if err := st.DB().Find(&channels).Error; err != nil || len(channels) != 1 {
				t.Fatalf("channels: %d (%v), want 1 across both runs", len(channels), err)
			}
			ch := channels[0]
			if n := len([]rune(ch.ExternalID)); n > models.IDSize || !strings.HasPrefix(ch.ExternalID, user[:20]) {
				t.Errorf("channel external id %q (%d characters)", ch.ExternalID, n)
			}
			chat, err := st.Chat(ctx, ch.CurrentChatID)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(chat.CardID); n > models.IDSize || !strings.HasPrefix(chat.CardID, "the-keeper-of-the-lantern") {
				t.Errorf("card id %q (%d characters)", chat.CardID, n)
			}
			br, err := st.LoadBranch(ctx, chat.HeadID)
			if err != nil {
				t.Fatal(err)
			}
			// greeting and one beat per run, in one chat
			if len(br.Uncovered) != 5 || br.Uncovered[1].AuthorName != user {
				t.Errorf("branch: %d messages, first author %q", len(br.Uncovered), br.Uncovered[1].AuthorName)
			}
		})
	}
}
