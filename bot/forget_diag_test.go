package bot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/models"
	"troupe/models/testenv"
)

// With recall.diagnostics on, a chat's recall records name what it
// considered, with the items' words. /forget of another chat whose fact
// one of them names deletes that record (found by the items it was filed
// under, not by its text): the forgotten word is in no diagnostic row,
// /why does not show it, and on SQLite it is on no raw page. The chat's
// record that names nothing of the forgotten chat stays. The positive
// control is /why before the forget, which shows the fact.
func TestForgetTakesOtherChatsDiagnosticsThatNameIt(t *testing.T) {
	const word = "Zephyrine"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRecallRig(t, b, 1)
			r.opt.Recall.Diagnostics = true
			r.p = bot.New(r.opt)

			// Chat B tells the fact; the next turn has it recorded.
			r.say(t, "fb", 1, "Ada", "I hid the silver key inside the "+word+" teapot.")
			r.say(t, "fb", 2, "Ada", "*I look at the sea for a while.*")
			told := r.chat(t, "fb")
			var key []string
			if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ? AND text LIKE ?", told.ID, "%"+word+"%").Pluck("id", &key).Error; err != nil || len(key) == 0 {
				t.Fatalf("the key was not recorded in chat B: %v (%v)", key, err)
			}

			// Chat A, same card and space, later: a turn that recalls
			// nothing of B, then the question that recalls the key.
			r.say(t, "fa", 3, "Ada", "*I watch the gulls over the harbour.*")
			asker := r.chat(t, "fa")
			waitDiagnostics(t, r, asker.ID, 1)
			r.say(t, "fa", 4, "Ada", "Where did I hide the silver key?")
			if block := recallBlock(t, r.fake); !strings.Contains(block, word) {
				t.Fatalf("chat A's recall block lacks the key:\n%s", block)
			}
			var asked []string
			r.st.DB().Model(&models.Message{}).Where("chat_id = ? AND content = ?", asker.ID, "Where did I hide the silver key?").Pluck("id", &asked)
			if len(asked) != 1 {
				t.Fatalf("%d questions stored in chat A, want 1", len(asked))
			}
			var listed []string
			for _, it := range reportOf(t, r, asker.ID, asked[0]).Items {
				listed = append(listed, it.ID)
			}
			if !hasAny(listed, key) {
				t.Fatalf("chat A's diagnostic does not name the key %v: %v", key, listed)
			}
			if why := r.exec(t, "fa", "why"); !strings.Contains(why, word) {
				t.Fatalf("before the forget /why in chat A does not show the key: %q", why)
			}
			if n := diagnosticsWith(t, r, word); n == 0 {
				t.Fatal("no diagnostic row holds the word before the forget: the test checks nothing")
			}
			path := strings.TrimPrefix(b.DSN, "sqlite://")
			if b.Name == "sqlite" && bytesInFiles(t, path, word) == 0 {
				t.Fatal("the word is on no page before the forget: the test checks nothing")
			}

			forgetConfirmed(t, r.p, r.st, "fb", told.ID)

			if n := diagnosticsWith(t, r, word); n != 0 {
				t.Errorf("after the forget %d diagnostic rows still hold B's word", n)
			}
			why := r.exec(t, "fa", "why")
			if strings.Contains(why, word) {
				t.Errorf("after the forget /why in chat A shows B's word: %q", why)
			}
			// Chat A's record that named nothing of B stays.
			ds, err := r.st.RecallDiagnostics(ctx, asker.ID, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 {
				t.Errorf("chat A keeps %d diagnostics after the forget, want 1 (the turn that recalled nothing of B)", len(ds))
			}
			if b.Name == "sqlite" {
				if n := bytesInFiles(t, path, word); n != 0 {
					t.Errorf("after the forget B's word is on %d raw pages", n)
				}
			}
		})
	}
}

// waitDiagnostics waits until the chat keeps n recall records (written off
// the turn's path).
func waitDiagnostics(t *testing.T, r *recordRig, chatID string, n int) {
	t.Helper()
	for i := 0; ; i++ {
		ds, err := r.st.RecallDiagnostics(context.Background(), chatID, "", n+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) >= n {
			return
		}
		if i == 1000 {
			t.Fatalf("chat %s keeps %d recall records, want %d", chatID, len(ds), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// diagnosticsWith counts the diagnostic rows, of any chat, that hold text.
func diagnosticsWith(t *testing.T, r *recordRig, text string) int64 {
	t.Helper()
	var n int64
	if err := r.st.DB().Model(&models.RecallDiagnostic{}).Where("data LIKE ?", "%"+text+"%").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// bytesInFiles counts text in an SQLite database file and its WAL and
// rollback journal, where they exist.
func bytesInFiles(t *testing.T, path, text string) int {
	t.Helper()
	n := 0
	for _, f := range []string{path, path + "-wal", path + "-journal"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte(text))
	}
	return n
}
