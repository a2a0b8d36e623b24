package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/adapters/discord/discordtest"
)

// TestNewNeedsTheManageRightInAGuild: Bob, a plain member, is refused /new
// to him alone and the chat goes on; Manage Messages is not enough either.
// Ada, who may manage the server, ends the chat.
func TestNewNeedsTheManageRightInAGuild(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("Remember the red key.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "red key") }, "the first reply")
	chat := h.currentChat(h.channel).ID
	waitFor(t, 10*time.Second, func() bool { return h.chatMessages(chat) == 3 }, "the reply stored")

	for _, perms := range []int64{member, manageMessages} {
		ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: perms, Name: "new"})
		waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal")
		if m := ix.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "may end its chat") {
			t.Errorf("/new by a member with permissions %d answered %+v, want a refusal to him alone", perms, m)
		}
		if got := h.currentChat(h.channel).ID; got != chat {
			t.Fatalf("/new by a member with permissions %d ended the chat", perms)
		}
	}
	h.say("The key opens the tower.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 2, "opens the tower") }, "the chat going on")
	if got := h.userTexts(h.channel); len(got) != 2 {
		t.Errorf("the chat holds %q, want both messages", got)
	}

	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: int64(discordgo.PermissionManageGuild), Name: "new"})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) == 1 && len(h.characterMessages(h.channel)) == 3 }, "the new chat's greeting")
	if m := ix.Messages()[0]; m.Ephemeral || !strings.Contains(m.Content, "New chat started") {
		t.Errorf("/new by a manager answered %+v, want the public new chat notice", m)
	}
	if got := h.currentChat(h.channel).ID; got == chat || got == "" {
		t.Errorf("/new by a manager kept the chat")
	}
}

// TestRegenIsForTheAuthorOrAManager: Ada's message is answered. Bob, a
// plain member, is refused /regen to him alone with no model call; Ada,
// whose message it answers, and Bob with Manage Messages each have it
// written again.
func TestRegenIsForTheAuthorOrAManager(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("Hello.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello.") }, "the first reply")
	chat := h.currentChat(h.channel).ID
	waitFor(t, 10*time.Second, func() bool { return h.chatMessages(chat) == 3 }, "the reply stored")
	calls := h.model.Count()

	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "regen"})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal")
	if m := ix.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "Only the player whose message") {
		t.Errorf("Bob's /regen answered %+v, want a refusal to him alone", m)
	}
	if n := h.model.Count(); n != calls {
		t.Errorf("Bob's refused /regen made %d model calls", n-calls)
	}

	regen := func(who discordtest.User, perms int64, stored int64) {
		t.Helper()
		ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: who, Permissions: perms, Name: "regen"})
		waitFor(t, 10*time.Second, func() bool { return h.chatMessages(chat) == stored }, "the reply written again")
		for _, m := range ix.Messages() {
			if strings.Contains(m.Content, "Only the player") {
				t.Errorf("%s's /regen was refused: %q", who.Username, m.Content)
			}
		}
	}
	regen(h.ada, member, 4)
	regen(h.bob, manageMessages, 5)
	if n := h.model.Count(); n != calls+2 {
		t.Errorf("the two allowed /regen made %d model calls, want 2", n-calls)
	}
}
