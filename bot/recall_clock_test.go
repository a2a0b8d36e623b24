package bot_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models/testenv"
	"troupe/recall"
)

// Each chat keeps its own story clock, and a new chat may start again at
// day 1. A fact told in one chat, after which a season passed there, has
// faded out of recall in that chat; in the next chat of the same card it
// is faded too, not fresh because the new chat's clock reads day 1. The
// control: a fact from a chat whose clock did not move after it is recalled
// fresh in the same turn.
func TestRecallAgesAMemoryByItsOwnChatsClock(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			var day atomic.Int64
			day.Store(1)
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				a := r.scribe.Respond(req)
				if memorytest.Kind(req) == "record" {
					a.Text = onDay(t, a.Text, int(day.Load()))
				}
				return a
			})
			r.opt.Recall.Diagnostics = true
			r.opt.Recall.KeptChars = 0
			r.p = bot.New(r.opt)
			ask := "Where did I bury the brass compass, and what is my grey mare called?"

			// Chat 1: the compass on day 1, then three months there.
			r.say(t, "tide", 1, "Ada", "I buried the brass compass under the old oak.")
			r.say(t, "tide", 2, "Ada", "*I look at the sea for a while.*")
			day.Store(91)
			r.say(t, "tide", 3, "Ada", "*Three months pass at the lighthouse.*")
			r.say(t, "tide", 4, "Ada", "*The gulls come back.*")
			r.say(t, "tide", 5, "Ada", ask)
			rep := waitReport(t, r, "tide", func(rep memory.RecallReport) bool { return reportItem(rep, "brass compass") != nil })
			if it := reportItem(rep, "brass compass"); it.Retention >= recall.GoneBelow {
				t.Fatalf("chat 1, day 91: the compass of day 1 kept retention %.2f, want it faded out (< %.2f)", it.Retention, recall.GoneBelow)
			}

			// The control's chat: the mare on day 1, and its clock stays.
			day.Store(1)
			r.say(t, "harbour", 6, "Ada", "My grey mare is called Juniper.")
			r.say(t, "harbour", 7, "Ada", "*We sit by the fire.*")
			r.say(t, "harbour", 8, "Ada", "*The fire burns low.*")

			// Chat 2 of the first channel starts again at day 1.
			r.exec(t, "tide", "new")
			r.say(t, "tide", 9, "Ada", "Good morning, Maren.")
			r.say(t, "tide", 10, "Ada", "*The sun rises over the sea.*")
			r.say(t, "tide", 11, "Ada", ask)
			block := recallBlock(t, r.fake)
			if strings.Contains(block, "brass compass") {
				t.Errorf("chat 2, day 1: the compass that faded in chat 1 is recalled fresh:\n%s", block)
			}
			if !strings.Contains(block, "Juniper") {
				t.Errorf("chat 2: the mare, whose chat's clock did not move after it, is not recalled:\n%s", block)
			}
			rep = waitReport(t, r, "tide", func(rep memory.RecallReport) bool {
				return reportItem(rep, "brass compass") != nil && reportItem(rep, "Juniper") != nil
			})
			if it := reportItem(rep, "brass compass"); it.Retention >= recall.GoneBelow || it.Picked {
				t.Errorf("chat 2: the compass scored retention %.2f (picked %v), want faded out as in chat 1", it.Retention, it.Picked)
			}
			if it := reportItem(rep, "Juniper"); it.Retention < 0.9 || !it.Picked {
				t.Errorf("chat 2: the mare scored retention %.2f (picked %v), want fresh and picked", it.Retention, it.Picked)
			}
		})
	}
}

// reportItem is the first item of rep whose text holds s; nil if none.
func reportItem(rep memory.RecallReport, s string) *memory.ReportItem {
	for i := range rep.Items {
		if strings.Contains(rep.Items[i].Text, s) {
			return &rep.Items[i]
		}
	}
	return nil
}

// onDay rewrites a recorder answer's story times to day d, ten o'clock.
func onDay(t *testing.T, answer string, d int) string {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		t.Fatalf("the fake recorder's answer: %v", err)
	}
	turns, _ := a["turns"].([]any)
	for _, x := range turns {
		turn, _ := x.(map[string]any)
		turn["story_time"] = map[string]int{"day": d, "minute": 600}
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
