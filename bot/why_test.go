package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/models"
	"troupe/models/testenv"
)

// slowNotes writes a turn's recall record (counts and diagnostic) late, as
// a loaded database does.
type slowNotes struct {
	bot.Store
	delay time.Duration
}

func (s slowNotes) NoteRecall(ctx context.Context, d models.RecallDone) error {
	time.Sleep(s.delay)
	return s.Store.NoteRecall(ctx, d)
}

// TestWhyRightAfterAReplyShowsThatTurn: the recall record is written off
// the turn's path; /why sent as soon as the reply came shows that turn's
// recall, not the turn before it (a flake of the console's /why test on a
// loaded CI machine).
func TestWhyRightAfterAReplyShowsThatTurn(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			r.opt.Recall.Diagnostics = true
			r.p = bot.New(r.opt)
			r.say(t, "wy", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "wy", 3, "Ada", "*I look at the sea for a while.*")
			r.exec(t, "wy", "new")
			r.say(t, "wy", 4, "Ada", "*I wait.*")
			if why := r.exec(t, "wy", "why"); strings.Contains(why, "brass compass") {
				t.Fatalf("a turn nothing cued recalled the compass: %q", why)
			}
			r.opt.Store = slowNotes{Store: r.opt.Store, delay: 400 * time.Millisecond}
			r.p = bot.New(r.opt)
			r.say(t, "wy", 5, "Ada", "Where did I bury the brass compass?")
			if why := r.exec(t, "wy", "why"); !strings.Contains(why, "I buried the brass compass") {
				t.Errorf("/why right after the reply = %q, want the compass this turn recalled", why)
			}
		})
	}
}
