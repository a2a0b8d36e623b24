package bot_test

import (
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models/testenv"
)

// A player corrects a fact in the very next turn while story time stands
// still: the recorder gives both turns the same day and minute, so the
// stale fact and its correction score alike. Recall in the next chat picks
// the correction first (#30 item 6): at equal scores the newer item wins,
// and the block the model gets holds it. The control is the faithful
// recorder, whose story clock moves a day a turn.
func TestACorrectionAtTheSameStoryTimeIsRecalledFirst(t *testing.T) {
	for _, clock := range []string{"still", "moving"} {
		for _, b := range testenv.Backends(t) {
			t.Run(clock+"/"+b.Name, func(t *testing.T) {
				t.Parallel()
				correctionAtTheSameTime(t, b, clock == "still")
			})
		}
	}
}

// correctionAtTheSameTime plays the fact and its correction, then the
// question a few turns into the next chat; still gives every turn the same
// story time.
func correctionAtTheSameTime(t *testing.T, b testenv.Backend, still bool) {
	r := newRecallRig(t, b, 1)
	r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		a := r.scribe.Respond(req)
		if still && memorytest.Kind(req) == "record" {
			a.Text = onDay(t, a.Text, 1)
		}
		return a
	})
	r.opt.Recall.Diagnostics = true
	r.p = bot.New(r.opt)
	stale, correction := "password for the cellar door is heron", "password for the cellar door is kestrel"

	r.say(t, "cellar", 1, "Ada", "The password for the cellar door is heron.")
	r.say(t, "cellar", 2, "Ada", "No — I misspoke: the password for the cellar door is kestrel.")
	r.say(t, "cellar", 3, "Ada", "*I look at the sea for a while.*")
	r.exec(t, "cellar", "new")
	// A few turns of the next chat first, so that its story clock is past
	// both (with the faithful recorder) whatever clock recall ages them by.
	r.say(t, "cellar", 4, "Ada", "*The kettle sings on the stove.*")
	r.say(t, "cellar", 5, "Ada", "*Rain runs down the glass.*")
	r.say(t, "cellar", 6, "Ada", "*I warm my hands by the fire.*")
	r.say(t, "cellar", 7, "Ada", "What is the password for the cellar door?")

	block := recallBlock(t, r.fake)
	if !strings.Contains(block, correction) {
		t.Errorf("the recall block lacks the correction:\n%s", block)
	}
	rep := waitReport(t, r, "cellar", func(rep memory.RecallReport) bool {
		return reportItem(rep, correction) != nil && reportItem(rep, stale) != nil
	})
	old, fix := reportItem(rep, stale), reportItem(rep, correction)
	if still && old.Total != fix.Total {
		t.Fatalf("no tie to break: the stale fact scored %.4f, the correction %.4f", old.Total, fix.Total)
	}
	// Select reports the picked items first, in the order picked.
	at := func(s string) int {
		for i, it := range rep.Items {
			if strings.Contains(it.Text, s) {
				return i
			}
		}
		return -1
	}
	if !fix.Picked {
		t.Errorf("the correction was not picked (%s); the stale fact picked %v", fix.Why, old.Picked)
	} else if old.Picked && at(stale) < at(correction) {
		t.Errorf("the stale fact (%.4f) was picked before its correction (%.4f):\n%s", old.Total, fix.Total, block)
	}
}
