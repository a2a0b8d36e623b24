package bot_test

import (
	"context"
	"strings"
	"testing"

	"troupe/fakes/openaitest"
	"troupe/models"
)

// The recorder holds a chat's newest turn back while /regen could replace
// it. When the chat ends (/new) no /regen reaches it any more: the job the
// end enqueues records that last turn too, so a fact told in the last
// exchange is recalled in the next chat as one told mid-chat is (the
// control). A scene of two cards, on the real job queue and worker with the
// faithful scribe as recorder. After /new, /regen works on the new chat and
// leaves the old one as it was.
func TestLastTurnIsRecordedWhenTheChatEnds(t *testing.T) {
	const mid, last = "Alderwick", "Brackenholt"
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newViewRig(t, b, viewOpts{recorder: true, batch: 2})
			say := r.sayer(t)
			say("Maren, hear this: my sister's boat is named the " + mid + ".")
			say("Maren, the evening is calm.")
			r.drain(t)
			say("Maren, the tide is turning.")
			r.drain(t)
			say("Maren, one last thing: the spare key sits under the " + last + " stone.")
			r.drain(t)
			old := sceneChat(t, r.sceneRig)

			r.exec(t, "/new")
			r.drain(t)
			r.drain(t)
			for _, word := range []string{mid, last} {
				var n int64
				if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ? AND character_name = ? AND text LIKE ?", old.ID, "Maren", "%"+word+"%").
					Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Errorf("after /new Maren has no perception of %q in the ended chat", word)
				}
			}

			// /regen now reaches the new chat only.
			oldHead := old.HeadID
			r.exec(t, "/regen")
			again, err := r.st.Chat(ctx, old.ID)
			if err != nil {
				t.Fatal(err)
			}
			if again.HeadID != oldHead {
				t.Errorf("/regen after /new moved the ended chat's head from %s to %s", oldHead, again.HeadID)
			}
			if sceneChat(t, r.sceneRig).ID == old.ID {
				t.Fatal("/new left the old chat current")
			}

			ps := say("Maren, what is my sister's boat called, and where is the spare key?")
			block := rememberedIn(lastPromptOf(t, ps, "Maren"))
			if !strings.Contains(block, mid) {
				t.Errorf("the next chat's recall lacks the mid-chat fact (control):\n%s", block)
			}
			if !strings.Contains(block, last) {
				t.Errorf("the next chat's recall lacks the fact told in the last exchange:\n%s", block)
			}
		})
	}
}

// rememberedIn joins the recall blocks ([Remembered]) among msgs.
func rememberedIn(msgs []openaitest.Message) string {
	var out []string
	for _, m := range msgs {
		if m.Role == "system" && strings.Contains(m.Content, "[Remembered]") {
			out = append(out, m.Content)
		}
	}
	return strings.Join(out, "\n")
}
