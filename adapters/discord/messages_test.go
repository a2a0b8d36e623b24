package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/models"
)

func TestThreadIsASeparateChatOfTheSameSpace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("In the hall.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "In the hall.") }, "the channel's reply")
	thread := h.discord.CreateThread(h.channel, "A side quest", h.ada)
	h.discord.Post(discordtest.Post{ChannelID: thread, Author: h.ada, Content: "In the thread."})
	waitFor(t, 10*time.Second, func() bool { return h.replied(thread, 1, "In the thread.") }, "the thread's reply")

	for _, c := range h.discord.CallsTo("POST /webhooks/*/*") {
		if strings.Contains(string(c.Body), "In the thread.") && c.Query.Get("thread_id") != thread {
			t.Errorf("thread reply posted with thread_id %q, want %s", c.Query.Get("thread_id"), thread)
		}
	}
	if hooks := h.discord.Webhooks(h.channel); len(hooks) != 1 {
		t.Errorf("channel webhooks = %v, want the one webhook for the channel and its thread", hooks)
	}
	ctx := context.Background()
	parent, err := h.store.Channel(ctx, "discord:"+h.channel)
	if err != nil {
		t.Fatal(err)
	}
	th, err := h.store.Channel(ctx, "discord:"+thread)
	if err != nil {
		t.Fatal(err)
	}
	if th.SpaceID != parent.SpaceID || th.SpaceID != "discord:guild:"+h.guild {
		t.Errorf("space ids: thread %q, channel %q, want both discord:guild:%s", th.SpaceID, parent.SpaceID, h.guild)
	}
	if th.CurrentChatID == parent.CurrentChatID || th.CurrentChatID == "" {
		t.Errorf("thread chat %q, channel chat %q: want two chats", th.CurrentChatID, parent.CurrentChatID)
	}
	if th.CardID != parent.CardID {
		t.Errorf("thread plays %q, channel %q: want the parent's card", th.CardID, parent.CardID)
	}
	if got := h.userTexts(thread); len(got) != 1 || got[0] != "In the thread." {
		t.Errorf("thread chat's user messages = %q", got)
	}
}

func TestBotWebhookAndUnboundMessagesAreIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	other := h.discord.AddChannel(h.guild, "general")
	foreign := h.discord.AddForeignWebhook(h.channel)
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: discordtest.User{ID: h.discord.NewID(), Username: "otherbot", Bot: true}, Content: "beep"})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: discordtest.User{ID: foreign, Username: "Relay", Bot: true}, WebhookID: foreign, Content: "relayed"})
	notHere := h.discord.Post(discordtest.Post{ChannelID: other, Author: h.ada, Content: "not here"})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "a pin", Type: 6})
	h.say("Only this counts.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Only this counts.") }, "the reply")
	// The gateway hands messages over in order and the engine decides at
	// once: the reply to the last one means the others were looked at.
	waitFor(t, 5*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "message ignored: the channel does not play for it") && strings.Contains(h.logs.String(), "message_id="+notHere)
	}, "the message in the unbound channel ignored")
	if n := h.model.Count(); n != 1 {
		t.Errorf("model calls = %d, want 1", n)
	}
	if got := h.userTexts(h.channel); len(got) != 1 || got[0] != "Only this counts." {
		t.Errorf("stored user messages = %q", got)
	}
	if msgs := h.discord.Messages(other); len(msgs) != 1 {
		t.Errorf("unbound channel has %d messages, want only the user's", len(msgs))
	}
	for _, hook := range h.discord.CallsTo("POST /webhooks/*/*") {
		if strings.Contains(hook.Path, foreign) {
			t.Errorf("the bot spoke through another integration's webhook")
		}
	}
}

func TestGatewayDropMidConversationResumesWithoutLossOrDuplicates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.model.Script(openaitest.Answer{Text: "The keeper pauses, then speaks at length about the old lamps.", ChunkSize: 6, ChunkDelay: 60 * time.Millisecond})
	first := h.say("First question.")
	waitFor(t, 10*time.Second, func() bool { return len(h.characterMessages(h.channel)) == 1 }, "the first reply to start")
	h.discord.Drop(4000)
	h.say("Second question, sent while the bot was away.")
	waitFor(t, 15*time.Second, func() bool { return h.discord.Resumes() == 1 && h.discord.Connected() }, "the resume")
	waitFor(t, 15*time.Second, func() bool { return h.replied(h.channel, 2, "Second question") }, "the second reply")
	// Discord may deliver a message again after a reconnect.
	h.discord.Redeliver(first)
	waitFor(t, 10*time.Second, func() bool {
		return strings.Count(h.logs.String(), `msg="message handled" component=discord shard=0 channel_id=`+h.channel+" message_id="+first) == 2
	}, "the second delivery handled")
	if n := h.model.Count(); n != 2 {
		t.Errorf("model calls = %d, want 2 (each message answered once)", n)
	}
	if n := len(h.characterMessages(h.channel)); n != 2 {
		t.Errorf("character messages = %d, want 2", n)
	}
	want := "First question.|Second question, sent while the bot was away."
	if got := strings.Join(h.userTexts(h.channel), "|"); got != want {
		t.Errorf("stored user messages = %q, want %q", got, want)
	}
	if ids := h.discord.Identifies(); len(ids) != 1 {
		t.Errorf("identified %d times, want once (then resumed)", len(ids))
	}
	if h.discord.Heartbeats() == 0 {
		t.Errorf("no heartbeat was sent")
	}
}

func TestEditBeforeTheReplyStartsIsTakenAsNewText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.model.Script(openaitest.Answer{Text: "A slow first answer that takes its time to arrive.", ChunkSize: 5, ChunkDelay: 80 * time.Millisecond})
	h.say("First.")
	waitFor(t, 10*time.Second, func() bool { return len(h.characterMessages(h.channel)) == 1 }, "the first reply to start")
	second := h.say("I take the red key.")
	waitFor(t, 10*time.Second, func() bool {
		rows, err := h.store.Inbox(context.Background(), "discord:"+h.channel)
		return err == nil && len(rows) == 1 && rows[0].Content == "I take the red key."
	}, "the second message waiting in the inbox")
	h.discord.Edit(second, "I take the blue key.")
	waitFor(t, 20*time.Second, func() bool { return h.replied(h.channel, 2, "blue key") }, "the second reply")
	// The waiting message takes the edited text: the old text is never sent.
	want := "First.|I take the blue key."
	if got := strings.Join(h.userTexts(h.channel), "|"); got != want {
		t.Errorf("stored user messages = %q, want %q", got, want)
	}
	// An edit after the reply is ignored.
	h.discord.Edit(second, "I take the green key.")
	waitFor(t, 10*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "edit left alone: its message is not waiting") && strings.Contains(h.logs.String(), "message_id="+second)
	}, "the late edit looked at")
	if n := h.model.Count(); n != 2 {
		t.Errorf("model calls = %d, want 2", n)
	}
}

func TestDirectMessagesPlayInTheUsersSpace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	dm := h.discord.AddDM(h.bob)
	h.discord.Post(discordtest.Post{ChannelID: dm, Author: h.bob, Content: "Hello from a DM."})
	waitFor(t, 10*time.Second, func() bool {
		for _, m := range h.discord.Messages(dm) {
			if m.AuthorID == h.discord.Bot().ID && strings.HasPrefix(m.Content, "**Maren**\n") && strings.Contains(m.Content, "listening") {
				return true
			}
		}
		return false
	}, "the reply in the DM")
	ch, err := h.store.Channel(context.Background(), "discord:"+dm)
	if err != nil {
		t.Fatal(err)
	}
	if ch.SpaceID != "discord:user:"+h.bob.ID {
		t.Errorf("DM space = %q, want discord:user:%s", ch.SpaceID, h.bob.ID)
	}
}

func TestWhereTheBotMayNotPlay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  func(*config.Discord)
	}{
		{"DMs off, other channels allowed", func(c *config.Discord) { c.AllowDMs, c.AllowedChannels = false, []string{"1"} }},
		{"DMs off, other guilds allowed", func(c *config.Discord) { c.AllowDMs, c.AllowedGuilds = false, []string{"1"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{cfg: tt.cfg})
			dm := h.discord.AddDM(h.bob)
			inDM := h.discord.Post(discordtest.Post{ChannelID: dm, Author: h.bob, Content: "Hello from a DM."})
			inChannel := h.say("Hello in a place that is not allowed.")
			ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageMessages, Name: "chats"})
			waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal")
			if m := ix.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "does not play here") {
				t.Errorf("/chats answered %+v", m)
			}
			for _, id := range []string{inDM, inChannel} {
				waitFor(t, 5*time.Second, func() bool {
					return strings.Contains(h.logs.String(), `msg="message ignored: not allowed here"`) && strings.Contains(h.logs.String(), "message_id="+id)
				}, "message %s looked at", id)
			}
			if n := h.model.Count(); n != 0 {
				t.Errorf("model calls = %d, want none", n)
			}
		})
	}
}

func TestEmptyContentLogsTheIntentHint(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("")
	waitFor(t, 5*time.Second, func() bool { return strings.Contains(h.logs.String(), "Message Content intent") }, "the hint")
	if ids := h.discord.Identifies(); len(ids) != 1 || ids[0].Intents != int(intents) {
		t.Errorf("identify intents = %v, want %d", ids, intents)
	}
}

func TestUndeliverableReplyIsReportedNotLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.discord.Fail("POST /webhooks/*/*", 100, 500)
	h.discord.Fail("POST /channels/*/messages", 3, 500)
	h.say("Can you hear me?")
	waitFor(t, 15*time.Second, func() bool { return strings.Contains(h.logs.String(), "reply not delivered") }, "the error log")
	waitFor(t, 5*time.Second, func() bool {
		for _, m := range h.discord.Messages(h.channel) {
			if strings.Contains(m.Content, "could not be posted") {
				return true
			}
		}
		return false
	}, "the notice in the channel")
	waitFor(t, 5*time.Second, func() bool { return strings.Contains(h.logs.String(), "msg=\"deliver reply\" component=bot chat_id=") },
		"the pipeline's log of the lost reply with its chat id")
	// The reply is stored: /regen can write it again.
	ch, _ := h.store.Channel(context.Background(), "discord:"+h.channel)
	var n int64
	h.store.DB().Model(&models.Message{}).Where("chat_id = ? AND role = ?", ch.CurrentChatID, "assistant").Count(&n)
	if n < 2 {
		t.Errorf("assistant messages stored = %d, want the greeting and the reply", n)
	}
}

func TestMentionOnlyChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	if err := h.store.SetChannelMentionOnly(context.Background(), "discord:"+h.channel, true); err != nil {
		t.Fatal(err)
	}
	h.say("just talking among ourselves")
	me := h.discord.Bot()
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "<@" + me.ID + "> are you there?", Mentions: []discordtest.User{me}})
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "are you there?") }, "the reply to the mention")
	reply := h.characterMessages(h.channel)[0]
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.bob, Content: "And to you, keeper.", ReplyTo: reply.ID, Type: 19})
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 2, "And to you, keeper.") }, "the reply to the reply")
	want := "are you there?|And to you, keeper."
	if got := strings.Join(h.userTexts(h.channel), "|"); got != want {
		t.Errorf("stored user messages = %q, want %q", got, want)
	}
}

func TestShardIdentifiesAndLeavesCommandsToShardZero(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{cfg: func(c *config.Discord) { c.ShardID, c.ShardCount = 1, 2 }})
	if ids := h.discord.Identifies(); len(ids) != 1 || ids[0].Shard != [2]int{1, 2} {
		t.Errorf("identify = %+v, want shard [1 2]", ids)
	}
	waitFor(t, 5*time.Second, func() bool { return strings.Contains(h.logs.String(), "slash commands left to shard 0") }, "the registration decided")
	if n := len(h.discord.CallsTo("PUT /applications/*/commands")); n != 0 {
		t.Errorf("shard 1 registered commands %d times", n)
	}
}

func TestRunFailsWithAWrongToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	cfg := config.Discord{Token: "wrong", APIBaseURL: h.discord.URL(), ShardCount: 1}
	a, err := New(cfg, h.p, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Run(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("Run with a wrong token = %v, want a prompt error", err)
	}
	if _, err := New(config.Discord{}, h.p, nil); err != ErrNoToken {
		t.Errorf("New without a token = %v, want ErrNoToken", err)
	}
	// The pipeline itself reports bindings: no option is needed.
	if _, err := New(cfg, h.p, nil); err != nil {
		t.Errorf("New with the pipeline's bindings = %v, want nil", err)
	}
}
