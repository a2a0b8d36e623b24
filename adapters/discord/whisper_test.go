package discord

import (
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
)

// TestWhisperRegenReachesItsWriterAlone: Bob whispers to Ilse. Ada's
// /regen is refused to her alone and calls no model; Bob's /regen answers
// him alone under Ilse's name; the channel never sees the whisper.
func TestWhisperRegenReachesItsWriterAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	waitFor(t, 5*time.Second, func() bool { _, ok := h.discord.RegisteredCommand("", "whisper"); return ok }, "the slash commands registered")
	whisper := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "whisper",
		Options: map[string]string{"name": "Ilse", "text": "the key is under the third stone"}})
	waitFor(t, 15*time.Second, func() bool { return len(whisper.Messages()) == 2 }, "the whisper's acknowledgement and Ilse's answer")
	calls := h.model.Count()

	ada := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "regen"})
	waitFor(t, 5*time.Second, func() bool { return len(ada.Messages()) == 1 }, "the refusal of Ada's /regen")
	if m := ada.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "whisper") {
		t.Errorf("Ada's /regen answered %+v, want a refusal to her alone", m)
	}
	if n := h.model.Count(); n != calls {
		t.Errorf("Ada's /regen called the model %d times", n-calls)
	}

	bob := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "regen"})
	waitFor(t, 15*time.Second, func() bool {
		for _, m := range bob.Messages() {
			if strings.HasPrefix(m.Content, "**Ilse**\n") {
				return true
			}
		}
		return false
	}, "Ilse's new answer to Bob")
	for _, m := range bob.Messages() {
		if !m.Ephemeral {
			t.Errorf("Bob's /regen answered publicly: %+v", m)
		}
	}
	if n := h.model.Count(); n != calls+1 {
		t.Errorf("Bob's /regen made %d model calls, want 1", n-calls)
	}
	for _, m := range h.discord.Messages(h.channel) {
		if strings.Contains(m.Content, "third stone") || strings.Contains(m.Content, "listening.") {
			t.Errorf("the whisper or its answer reached the channel: %+v", m)
		}
	}
}
