package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// Recall quality on a long story (issue 16): a fact told at beat 3 and
// cued at beat 600 comes back in the recall block, although compaction
// covered it hundreds of beats ago and the scribe's summaries keep no
// facts; a fact told at beat 4 that nothing cues stays out. An English
// and a Chinese story, on both databases. Beats 2–599 are written through
// the store as the pipeline writes them (messages with their presence and
// plain events), recorded by the recorder every 50 beats, and compacted;
// beat 600 is a real turn.
func TestRecallBringsBackBeatThreeAtBeatSixHundred(t *testing.T) {
	stories := []struct {
		name, fact, uncued, filler, cue, want, notWant string
	}{
		{name: "en", fact: `"I buried the brass compass under the old oak."`, uncued: `"My grey mare is called Juniper."`,
			filler: `"Beat %d: the tide turns and the gulls circle the pier."`, cue: "Where did I bury the brass compass?",
			want: "brass compass under the old oak", notWant: "Juniper"},
		{name: "zh", fact: "「我把罗盘埋在老槐树下了。」", uncued: "「我的灰马叫杜松。」",
			filler: "「第%d夜：潮水转向，海鸥绕着码头飞。」", cue: "罗盘埋在哪里了？",
			want: "罗盘埋在老槐树下", notWant: "杜松"},
	}
	// Each story gets databases of its own: one SQLite file opened by
	// two parallel tests would be migrated twice at once, and one space
	// would hold both stories.
	for _, s := range stories {
		for _, b := range testenv.Backends(t) {
			t.Run(b.Name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				r := newRecordRig(t, b, 1000)
				// The story's 600 beats take three evenings (the fake
				// recorder would make each turn a day, and fading would
				// then rightly let an unimportant fact go).
				r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
					a := r.scribe.Respond(req)
					if memorytest.Kind(req) == "record" {
						a.Text = threeEvenings(t, a.Text)
					}
					return a
				})
				r.opt.Recall = config.Default().Recall
				r.p = bot.New(r.opt)
				ch := "long-" + s.name
				r.say(t, ch, 1, "Ada", "Good evening, Maren.")
				chat := r.chat(t, ch)
				head := chat.HeadID
				for beat := 2; beat < 600; beat++ {
					text := fmt.Sprintf(s.filler, beat)
					switch beat {
					case 3:
						text = s.fact
					case 4:
						text = s.uncued
					}
					u := &models.Message{Role: prompt.RoleUser, AuthorID: "ada", AuthorName: "Ada", Content: text}
					if err := r.st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{u}, &models.TurnRecord{SpaceID: chat.SpaceID,
						NewTurn: true, Present: []string{"Maren", "Ada"}, Actors: []string{"Ada"},
						Events: [][]models.PlainEvent{{{Kind: "line", Text: text}}}}); err != nil {
						t.Fatalf("beat %d: %v", beat, err)
					}
					a := &models.Message{Role: prompt.RoleAssistant, AuthorName: "Maren", Content: fmt.Sprintf("*Maren nods (%d).*", beat)}
					if err := r.st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{a}, &models.TurnRecord{SpaceID: chat.SpaceID,
						Present: []string{"Maren", "Ada"}, Actors: []string{"Maren"},
						Events: [][]models.PlainEvent{{{Kind: "action", Text: a.Content}}}}); err != nil {
						t.Fatalf("beat %d reply: %v", beat, err)
					}
					head = a.ID
					if beat%50 == 0 || beat == 599 {
						if _, err := r.mem.Record(ctx, chat.ID); err != nil {
							t.Fatalf("recording at beat %d: %v", beat, err)
						}
						compactAll(t, r.mem, chat.ID)
					}
				}
				var fact models.Perception
				if err := r.st.DB().Where("character_name = ? AND text LIKE ?", "Maren", "%"+s.want+"%").Take(&fact).Error; err != nil {
					t.Fatalf("Maren has no perception of beat 3: %v", err)
				}

				r.say(t, ch, 600, "Ada", s.cue)
				block := recallBlock(t, r.fake)
				if !strings.Contains(block, s.want) {
					t.Fatalf("beat 3 is not recalled at beat 600:\n%s", block)
				}
				if strings.Contains(block, s.notWant) {
					t.Errorf("the uncued beat 4 was dragged in:\n%s", block)
				}
				// Recall did the work: beat 3 is no longer among the turns
				// sent verbatim.
				reqs := r.fake.Requests()
				last := reqs[len(reqs)-1]
				for i := len(reqs) - 1; i >= 0 && !reqs[i].Stream; i-- {
					last = reqs[i-1]
				}
				for _, m := range last.Messages {
					if m.Role == "user" && strings.Contains(m.Content, s.want) {
						t.Errorf("beat 3 was sent verbatim, not recalled: %.80q", m.Content)
					}
				}
			})
		}
	}
}

// compactAll runs the compactions the chat owes, as the worker would.
func compactAll(t *testing.T, mem *memory.Service, chatID string) {
	t.Helper()
	for i := 0; ; i++ {
		res, err := mem.Compact(context.Background(), chatID, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != memory.Written {
			return
		}
		if i == 100 {
			t.Fatal("compaction never caught up")
		}
	}
}

// threeEvenings rewrites a recorder answer's story times so that turn n
// falls on evening 1 + n/200, n%200 two-minute steps after five o'clock.
func threeEvenings(t *testing.T, answer string) string {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		t.Fatalf("the fake recorder's answer: %v", err)
	}
	turns, _ := a["turns"].([]any)
	for _, x := range turns {
		turn, _ := x.(map[string]any)
		n := int(turn["turn"].(float64))
		turn["story_time"] = map[string]int{"day": 1 + n/200, "minute": 17*60 + (n%200)*2}
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
