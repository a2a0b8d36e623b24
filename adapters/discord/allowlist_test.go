package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/models"
)

// guildRef is the pipeline's name for a channel of a guild.
func guildRef(guildID, channelID string) bot.ChannelRef {
	return place{channelID: channelID, guildID: guildID}.ref("")
}

// TestEveryInteractionHonoursWhereTheBotMayPlay: where allowed_guilds,
// allowed_channels or allow_dms keep the bot out, a message, a slash
// command, an autocomplete request and a button press are all refused and
// leave nothing behind; the same paths work where it may play, and a live
// question pressed from the wrong place stays its asker's to answer.
func TestEveryInteractionHonoursWhereTheBotMayPlay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  func(c *config.Discord, guild, allowed string)
		// denied is the channel the bot may not play in.
		denied func(h *harness, guild, deniedRoom string) string
	}{
		{"guild not allowed",
			func(c *config.Discord, guild, _ string) { c.AllowedGuilds = []string{guild} },
			func(h *harness, _, _ string) string { return h.channel }},
		{"channel not allowed",
			func(c *config.Discord, _, allowed string) { c.AllowedChannels = []string{allowed} },
			func(_ *harness, _, deniedRoom string) string { return deniedRoom }},
		{"DMs off",
			func(c *config.Discord, _, _ string) { c.AllowDMs = false },
			func(h *harness, _, _ string) string { return h.discord.AddDM(h.ada) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var guild, allowed, deniedRoom string
			h := newHarness(t, setup{
				before: func(d *discordtest.Server) {
					guild = d.AddGuild("Open Hall")
					allowed = d.AddChannel(guild, "allowed")
					deniedRoom = d.AddChannel(guild, "denied")
				},
				cfg: func(c *config.Discord) { tt.cfg(c, guild, allowed) },
			})
			ctx := context.Background()
			for _, ch := range []string{allowed, deniedRoom} {
				if err := h.p.Bind(ctx, guildRef(guild, ch), "lantern-keeper"); err != nil {
					t.Fatal(err)
				}
			}
			denied := tt.denied(h, guild, deniedRoom)

			// Where the bot plays: a message is answered, autocomplete
			// offers the card, /forget asks its question.
			h.discord.Post(discordtest.Post{ChannelID: allowed, Author: h.ada, Content: "Hello where you play."})
			waitFor(t, 10*time.Second, func() bool { return h.replied(allowed, 1, "Hello where you play.") }, "the reply where the bot plays")
			ac := h.discord.Autocomplete(discordtest.Slash{ChannelID: allowed, User: h.ada, Name: "card", Sub: "set"}, "card", "mar")
			waitFor(t, 5*time.Second, func() bool { return len(ac.Choices()) == 1 }, "the card offered where the bot plays")
			ask := h.discord.Command(discordtest.Slash{ChannelID: allowed, User: h.ada, Permissions: manageMessages, Name: "forget"})
			waitFor(t, 5*time.Second, func() bool { return len(ask.Messages()) == 1 }, "the /forget question")
			question := ask.Messages()[0]
			c := string(question.Components)
			i := strings.Index(c, confirmYes)
			if i < 0 {
				t.Fatalf("/forget answered %+v, want a question", question)
			}
			token, _, _ := strings.Cut(c[i+len(confirmYes):], `"`)
			calls := h.model.Count()

			// Where it may not: every path is refused.
			said := h.discord.Post(discordtest.Post{ChannelID: denied, Author: h.ada, Content: "Hello where you may not play."})
			refused := func(ix *discordtest.Interaction, what string) {
				t.Helper()
				waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal of %s", what)
				if m := ix.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "does not play here") {
					t.Errorf("%s answered %+v, want an ephemeral refusal", what, m)
				}
			}
			refused(h.discord.Command(discordtest.Slash{ChannelID: denied, User: h.ada, Permissions: manageChannels, Name: "new"}), "/new")
			refused(h.discord.Command(discordtest.Slash{ChannelID: denied, User: h.ada, Permissions: manageChannels, Name: "card", Sub: "set",
				Options: map[string]string{"card": "maren"}}), "/card set")
			refused(h.discord.Click(said, confirmYes+token, h.ada, manageMessages), "a confirm press")
			ac = h.discord.Autocomplete(discordtest.Slash{ChannelID: denied, User: h.ada, Name: "card", Sub: "set"}, "card", "mar")
			waitFor(t, 5*time.Second, func() bool { return len(ac.Callbacks()) == 1 }, "the autocomplete answer")
			if cb, ch := ac.Callbacks()[0], ac.Choices(); cb.Type != 8 || len(ch) != 0 {
				t.Errorf("autocomplete where the bot may not play answered %+v with %+v, want no choices", cb, ch)
			}

			// The question pressed from the wrong place is still open.
			click := h.discord.Click(question.ID, confirmNo+token, h.ada, manageMessages)
			waitFor(t, 5*time.Second, func() bool {
				m, _ := click.Original()
				return strings.Contains(m.Content, "Cancelled")
			}, "the question cancelled by its asker")
			// The message was posted before the refused commands, which
			// were answered: it was looked at, and refused at once.
			waitFor(t, 5*time.Second, func() bool {
				return strings.Contains(h.logs.String(), `msg="message ignored: not allowed here"`) && strings.Contains(h.logs.String(), "message_id="+said)
			}, "the message where the bot may not play looked at")
			if n := h.model.Count(); n != calls {
				t.Errorf("model calls = %d, want %d (none where the bot may not play)", n, calls)
			}
			var chats, msgs int64
			h.store.DB().Model(&models.Chat{}).Where("channel_id = ?", "discord:"+denied).Count(&chats)
			h.store.DB().Model(&models.Message{}).Where("author_id = ? AND content LIKE ?", h.ada.ID, "%may not play%").Count(&msgs)
			if chats != 0 || msgs != 0 {
				t.Errorf("stored where the bot may not play: %d chats, %d messages", chats, msgs)
			}
			ch, err := h.store.Channel(ctx, "discord:"+denied)
			switch {
			case denied == deniedRoom || denied == h.channel:
				if err != nil || ch.CardID != "lantern-keeper" || ch.CurrentChatID != "" {
					t.Errorf("denied channel = %+v (%v), want its binding and no chat", ch, err)
				}
			case err == nil:
				t.Errorf("the DM became a channel: %+v", ch)
			}
		})
	}
}

// TestManageCommandsNeedPermissionOrAdminRole: the commands that change a
// channel or erase memory are refused to a member without the permission,
// whatever other roles they have, and carried out for a member with a role
// in admin_roles (named: the name is resolved to the role id at start).
func TestManageCommandsNeedPermissionOrAdminRole(t *testing.T) {
	t.Parallel()
	var guild, stage, storytellers, players string
	h := newHarness(t, setup{
		before: func(d *discordtest.Server) {
			storytellers, players = d.NewID(), d.NewID()
			guild = d.AddGuild("Role Hall", discordtest.Role{ID: storytellers, Name: "Storytellers"}, discordtest.Role{ID: players, Name: "Players"})
			stage = d.AddChannel(guild, "stage")
		},
		cfg: func(c *config.Discord) { c.AdminRoles = []string{"storytellers"} },
	})
	h.model.SetResponder((&memorytest.Scribe{}).Respond)
	ctx := context.Background()
	if err := h.p.Bind(ctx, guildRef(guild, stage), "lantern-keeper"); err != nil {
		t.Fatal(err)
	}
	h.discord.Post(discordtest.Post{ChannelID: stage, Author: h.ada, Content: "Hello from the stage."})
	waitFor(t, 10*time.Second, func() bool { return h.replied(stage, 1, "Hello from the stage.") }, "the reply")
	ch, err := h.store.Channel(ctx, "discord:"+stage)
	if err != nil {
		t.Fatal(err)
	}
	chat := ch.CurrentChatID
	waitFor(t, 10*time.Second, func() bool { return h.chatMessages(chat) == 3 }, "the reply stored")
	if _, err := h.mem.Recap(ctx, chat); err != nil {
		t.Fatal(err)
	}
	unbound := h.discord.AddChannel(guild, "backstage")

	carol := discordtest.User{ID: h.discord.NewID(), Username: "carol"}
	actors := []struct {
		name  string
		user  discordtest.User
		roles []string
		may   bool
	}{
		{"member", h.bob, nil, false},
		{"member with another role", h.bob, []string{players}, false},
		{"member with an admin role", carol, []string{storytellers}, true},
	}
	commands := []struct {
		name  string
		slash discordtest.Slash
		// done reports whether the command took effect.
		done func(ix *discordtest.Interaction) bool
	}{
		{"card mention", discordtest.Slash{ChannelID: stage, Name: "card", Sub: "mention", Options: map[string]string{"mode": "on"}},
			func(*discordtest.Interaction) bool {
				ch, _ := h.store.Channel(ctx, "discord:"+stage)
				return ch.MentionOnly
			}},
		{"card set", discordtest.Slash{ChannelID: unbound, Name: "card", Sub: "set", Options: map[string]string{"card": "maren"}},
			func(*discordtest.Interaction) bool {
				ch, err := h.store.Channel(ctx, "discord:"+unbound)
				return err == nil && ch.CardID == "lantern-keeper"
			}},
		{"forget", discordtest.Slash{ChannelID: stage, Name: "forget"},
			func(ix *discordtest.Interaction) bool {
				m := ix.Messages()
				return len(m) > 0 && strings.Contains(string(m[0].Components), confirmYes)
			}},
		{"memory delete-recap", discordtest.Slash{ChannelID: stage, Name: "memory", Options: map[string]string{"action": "delete-recap " + chat}},
			func(*discordtest.Interaction) bool {
				_, err := h.store.Recap(ctx, chat)
				return err != nil
			}},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			for _, a := range actors {
				s := c.slash
				s.User, s.Permissions, s.Roles = a.user, member, a.roles
				ix := h.discord.Command(s)
				waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) > 0 }, "the answer to %s", a.name)
				if a.may {
					waitFor(t, 5*time.Second, func() bool { return c.done(ix) }, "%s carried out for a %s", c.name, a.name)
					continue
				}
				if m := ix.Messages()[0]; !strings.Contains(m.Content, "Only members") {
					t.Errorf("%s: answer = %q, want the refusal", a.name, m.Content)
				}
				if c.done(ix) {
					t.Fatalf("%s carried out for a %s", c.name, a.name)
				}
			}
		})
	}
	if n := h.chatMessages(chat); n != 3 {
		t.Errorf("chat messages = %d, want 3 (nothing erased)", n)
	}
}
