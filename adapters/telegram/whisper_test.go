package telegram

import (
	"strings"
	"testing"
)

// TestWhisperRegenInAGroup: Alice whispers to Ilse in a group. Bob's
// /regen there is refused and calls no model; Alice's /regen there brings
// Ilse's new answer to her private chat; the group never sees the whisper
// or an answer to it.
func TestWhisperRegenInAGroup(t *testing.T) {
	t.Parallel()
	h := newSceneHarness(t)
	h.start()
	h.scene(groupRef(tavern))
	h.tg.SendGroupText(tavern, alice, "@troupe_test_bot Maren, hello.", 0)
	h.waitReplies(tavern.ID, 1)
	h.tg.SendGroupText(tavern, bob, "@troupe_test_bot Maren, good evening.", 0)
	h.waitReplies(tavern.ID, 2)
	h.tg.SendGroupText(tavern, alice, "/whisper Ilse meet me at the pier", 0)
	h.waitReplies(alice.ID, 1)
	calls := h.ai.Count()

	h.tg.SendGroupText(tavern, bob, "/regen", 0)
	h.waitText(tavern.ID, "only the one who whispered")
	if n := h.ai.Count(); n != calls {
		t.Errorf("Bob's /regen called the model %d times", n-calls)
	}

	h.tg.SendGroupText(tavern, alice, "/regen", 0)
	r := h.waitReplies(alice.ID, 2)
	if !spokenBy(r[1], "Ilse") || !strings.Contains(r[1].Text, "meet me at the pier") {
		t.Errorf("Alice's /regen was answered privately with %q, want Ilse", r[1].Text)
	}
	if n := len(h.replies(tavern.ID)); n != 2 {
		t.Errorf("%d replies in the group, want the 2 before the whisper", n)
	}
	for _, m := range h.tg.Messages(tavern.ID) {
		if m.From.ID == h.tg.Bot().ID && strings.Contains(m.Text, "pier") {
			t.Errorf("the whisper or its answer reached the group: %q", m.Text)
		}
	}
}
