package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
)

// recallAt returns the index of the system message in msgs that starts
// with a recall header (either language); -1 when none. With kept blocks
// there can be several: the last is the turn's own.
func recallAt(msgs []openaitest.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		if msgs[i].Role == "system" && (strings.HasPrefix(c, "[Remembered]") || strings.HasPrefix(c, "【记忆】")) {
			return i
		}
	}
	return -1
}

// TestRecallInASceneForEachSpeaker: in a scene every speaker of a turn
// recalls, the second as well as the first. The second's cues are all
// that is new to it since its own last line (the user's message and the
// first speaker's reply), its block stands just after that line, before
// the user's message, and on the next turn that block is sent again there,
// so its history up to it is what its last prompt sent.
func TestRecallInASceneForEachSpeaker(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newViewRig(t, b, viewOpts{recorder: true, batch: 2})
			say := r.sayer(t)
			say("@Maren @苏砚 I buried the brass compass under the old oak.")
			say("@Maren @苏砚 the night is cold.")
			r.drain(t)
			if _, err := r.mem.Record(context.Background(), sceneChat(t, r.sceneRig).ID); err != nil {
				t.Fatal(err)
			}
			for _, who := range []string{"Maren", "苏砚"} {
				var n int64
				if err := r.st.DB().Model(&models.Perception{}).Where("character_name = ? AND text LIKE ?", who, "%brass compass%").Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Fatalf("%s has no perception of the compass", who)
				}
			}
			r.exec(t, "/new")
			r.drain(t)

			ps := say("@Maren @苏砚 where did I bury the brass compass?")
			for _, who := range []string{"Maren", "苏砚"} {
				msgs := lastPromptOf(t, ps, who)
				i := recallAt(msgs)
				if i < 0 || !strings.Contains(msgs[i].Content, "brass compass") {
					t.Errorf("%s, speaking %s, recalls nothing of the compass:\n%s", who, map[bool]string{true: "first", false: "second"}[who == "Maren"], messagesText(msgs))
				}
			}
			su := lastPromptOf(t, ps, "苏砚")
			i := recallAt(su)
			if i < 0 || i+2 >= len(su) || su[i+1].Role != "user" || !strings.Contains(su[i+1].Content, "where did I bury") ||
				!strings.HasPrefix(su[i+2].Content, "Maren: ") {
				t.Fatalf("苏砚's block does not stand before the user's message and Maren's reply:\n%s", messagesText(su))
			}

			ps = say("@Maren @苏砚 the tide is turning.")
			next := lastPromptOf(t, ps, "苏砚")
			if len(next) <= i || !strings.HasPrefix(su[i].Content, next[i].Content) || !strings.Contains(next[i].Content, "brass compass") {
				t.Fatalf("苏砚's block is not sent again in its place:\nbefore:\n%s\nnow:\n%s", messagesText(su), messagesText(next))
			}
			// The system message is left out: the card's lore, which the
			// new messages trigger or not, lives there.
			for j := 1; j < i; j++ {
				if next[j] != su[j] {
					t.Fatalf("苏砚's prompt changed at message %d before her kept block:\nbefore: %q\nnow: %q", j, su[j].Content, next[j].Content)
				}
			}
		})
	}
}

// TestRecallOwnNameIsNoCueForOwnLines: in a scene the user names whom they
// speak to, so a character's name is in nearly every message it answers;
// it is no cue for its own memories, else every line it ever said (here a
// dozen "Maren nods and answers the question") would outrank what the
// question asks for and fill its recall. Asked where the compass is, Maren
// recalls the compass first and none of her own lines.
func TestRecallOwnNameIsNoCueForOwnLines(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newViewRig(t, b, viewOpts{recorder: true, batch: 2, recall: func(rc *config.Recall) { rc.Diagnostics, rc.KeptChars = true, 0 }})
			say := r.sayer(t)
			say("@Maren @苏砚 I buried the brass compass under the old oak.")
			for range 12 {
				say("@Maren the night is cold.")
			}
			r.drain(t)
			chat := sceneChat(t, r.sceneRig)
			if _, err := r.mem.Record(context.Background(), chat.ID); err != nil {
				t.Fatal(err)
			}
			var own int64
			if err := r.st.DB().Model(&models.Perception{}).Where("character_name = ? AND text LIKE ?", "Maren", "%Maren nods and answers%").Count(&own).Error; err != nil {
				t.Fatal(err)
			}
			if own < 10 {
				t.Fatalf("Maren keeps %d of her own lines, want 10 or more", own)
			}
			r.exec(t, "/new")
			r.drain(t)
			// Past the greetings, so that the question is all that is new
			// to Maren.
			say("@Maren good morning.")

			ps := say("@Maren where did I bury the brass compass?")
			msgs := lastPromptOf(t, ps, "Maren")
			i := recallAt(msgs)
			if i < 0 || !strings.Contains(msgs[i].Content, "brass compass") {
				t.Fatalf("Maren recalls nothing of the compass:\n%s", messagesText(msgs))
			}
			if strings.Contains(msgs[i].Content, "nods and answers") {
				t.Errorf("Maren's own passing lines fill her recall:\n%s", msgs[i].Content)
			}
			rep := sceneReport(t, r, sceneChat(t, r.sceneRig).ID, "Maren", "where did I bury")
			if len(rep.Items) == 0 || !rep.Items[0].Picked || !strings.Contains(rep.Items[0].Text, "brass compass") {
				t.Errorf("the compass is not Maren's first pick: %+v", rep.Items)
			}
		})
	}
}

// sceneReport waits for the inspector's record of who's recall in the
// chat for the turn whose message holds asked.
func sceneReport(t *testing.T, r *viewRig, chatID, who, asked string) memory.RecallReport {
	t.Helper()
	// The record is written beside the turn: wait for the one of the turn
	// that asked, not an earlier turn's.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := r.st.RecallDiagnostics(context.Background(), chatID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			var m models.Message
			if d.Character != who || r.st.DB().Where("id = ?", d.MessageID).Take(&m).Error != nil || !strings.Contains(m.Content, asked) {
				continue
			}
			rep, err := memory.ParseRecallReport(d.Data)
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recall record of %s for %q", who, asked)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
