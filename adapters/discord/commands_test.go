package discord

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/models"
)

const (
	manageMessages = int64(discordgo.PermissionManageMessages)
	manageChannels = int64(discordgo.PermissionManageChannels)
	member         = int64(discordgo.PermissionSendMessages | discordgo.PermissionViewChannel)
)

func TestCommandsRegisteredAtStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		devGuild string
	}{
		{"global", ""},
		{"dev guild", "4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{cfg: func(c *config.Discord) { c.DevGuild = tt.devGuild }})
			var want []string
			for _, c := range bot.Commands {
				want = append(want, c.Name)
			}
			waitFor(t, 5*time.Second, func() bool { return len(h.discord.Commands(tt.devGuild)) == len(want) }, "the commands")
			got := strings.Join(h.discord.Commands(tt.devGuild), ",")
			for _, w := range want {
				if !strings.Contains(","+got+",", ","+w+",") {
					t.Errorf("registered %s, missing %s", got, w)
				}
			}
			raw, _ := h.discord.RegisteredCommand(tt.devGuild, "card")
			var card discordgo.ApplicationCommand
			if err := json.Unmarshal(raw, &card); err != nil {
				t.Fatal(err)
			}
			var subs []string
			for _, o := range card.Options {
				subs = append(subs, o.Name)
				if o.Name == "set" && (len(o.Options) != 1 || !o.Options[0].Autocomplete) {
					t.Errorf("/card set options = %+v, want one autocompleted card option", o.Options)
				}
				if o.Name == "mention" && (len(o.Options) != 1 || len(o.Options[0].Choices) != 2 || !o.Options[0].Required) {
					t.Errorf("/card mention options = %+v, want one required on/off choice", o.Options)
				}
			}
			if strings.Join(subs, ",") != "set,list,show,mention" {
				t.Errorf("/card subcommands = %v", subs)
			}
			raw, _ = h.discord.RegisteredCommand(tt.devGuild, "forget")
			if !strings.Contains(string(raw), `"name":"chat"`) {
				t.Errorf("/forget has no chat option: %s", raw)
			}
			var voice, picture discordgo.ApplicationCommand
			raw, _ = h.discord.RegisteredCommand(tt.devGuild, "voice")
			if err := json.Unmarshal(raw, &voice); err != nil || len(voice.Options) != 1 || voice.Options[0].Name != "state" ||
				voice.Options[0].Required || len(voice.Options[0].Choices) != 2 || voice.Options[0].Choices[0].Value != "on" || voice.Options[0].Choices[1].Value != "off" {
				t.Errorf("/voice = %s, want one optional state with choices on and off", raw)
			}
			raw, _ = h.discord.RegisteredCommand(tt.devGuild, "picture")
			if err := json.Unmarshal(raw, &picture); err != nil || len(picture.Options) != 1 || picture.Options[0].Name != "what" ||
				picture.Options[0].Required || picture.Options[0].MaxLength != 300 {
				t.Errorf("/picture = %s, want one optional what of at most 300 characters", raw)
			}
		})
	}
}

func TestCardAutocompleteAndSet(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	room := h.discord.AddChannel(h.guild, "new-room")

	ix := h.discord.Autocomplete(discordtest.Slash{ChannelID: room, User: h.ada, Name: "card", Sub: "set"}, "card", "mAR")
	waitFor(t, 5*time.Second, func() bool { return len(ix.Choices()) > 0 }, "autocomplete choices")
	if c := ix.Choices()[0]; c.Value != "lantern-keeper" || !strings.Contains(c.Name, "Maren") {
		t.Errorf("choice = %+v, want Maren (lantern-keeper)", c)
	}

	// A member without Manage Channels is refused.
	ix = h.discord.Command(discordtest.Slash{ChannelID: room, User: h.bob, Permissions: manageMessages, Name: "card", Sub: "set",
		Options: map[string]string{"card": "MAREN"}})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal")
	if m := ix.Messages()[0]; !strings.Contains(m.Content, "Only members") {
		t.Errorf("refusal = %q", m.Content)
	}
	unheard := h.discord.Post(discordtest.Post{ChannelID: room, Author: h.ada, Content: "nobody plays here yet"})
	waitFor(t, 5*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "message ignored") && strings.Contains(h.logs.String(), "message_id="+unheard)
	}, "the message in the unbound channel looked at and ignored")

	// Someone who may manage channels binds the card by name, in any case.
	ix = h.discord.Command(discordtest.Slash{ChannelID: room, User: h.ada, Permissions: manageChannels, Name: "card", Sub: "set",
		Options: map[string]string{"card": "MAREN"}})
	waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the answer")
	if msgs := ix.Messages(); !strings.Contains(msgs[0].Content, "now plays Maren") || msgs[0].Ephemeral {
		t.Errorf("answer = %+v, want a public 'now plays Maren'", msgs)
	}
	h.discord.Post(discordtest.Post{ChannelID: room, Author: h.ada, Content: "Now you are here."})
	waitFor(t, 10*time.Second, func() bool {
		m := h.characterMessages(room)
		return len(m) > 0 && strings.Contains(m[len(m)-1].Content, "Now you are here.") && strings.Contains(m[len(m)-1].Content, "listening")
	}, "a reply in the newly bound channel")
	if got := h.userTexts(room); len(got) != 1 || got[0] != "Now you are here." {
		t.Errorf("the newly bound channel stored %q, want only the message after /card set", got)
	}
}

// discord.admin_roles matches roles by id: an id written there lets its
// members manage, a name is resolved to its role's id at start with a
// warning (names can change), and another role that has (or takes) the
// name later is not an admin role.
func TestRoleInAdminRolesMayManage(t *testing.T) {
	t.Parallel()
	var named string
	h := newHarness(t, setup{
		cfg: func(c *config.Discord) { c.AdminRoles = []string{"777", "Storytellers", "Nobody"} },
		before: func(d *discordtest.Server) {
			named = d.NewID()
			d.AddGuild("Role Hall", discordtest.Role{ID: named, Name: "Storytellers"})
		},
	})
	i := &discordgo.Interaction{GuildID: h.guild, Member: &discordgo.Member{Permissions: member, Roles: []string{"777"}}}
	if !h.a.canManage(nil, i, bot.Command{Name: "forget"}) {
		t.Errorf("a member with an admin role id may not manage")
	}
	i.Member.Roles = []string{named}
	if !h.a.canManage(nil, i, bot.Command{Name: "forget"}) {
		t.Errorf("a member with the role named in admin_roles may not manage")
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "resolved to its id") || !strings.Contains(logs, "role_id="+named) || !strings.Contains(logs, "names can change") {
		t.Errorf("no warning that the name was resolved to %s:\n%s", named, logs)
	}
	if !strings.Contains(logs, "no role of the bot's guilds has this name") || !strings.Contains(logs, "name=Nobody") {
		t.Errorf("no warning for the name no role has:\n%s", logs)
	}
	// A role that is given the name later is not an admin role.
	i.Member.Roles = []string{"778"}
	s := &discordgo.Session{State: discordgo.NewState()}
	if err := s.State.GuildAdd(&discordgo.Guild{ID: h.guild, Roles: []*discordgo.Role{{ID: "778", Name: "Storytellers"}}}); err != nil {
		t.Fatal(err)
	}
	if h.a.canManage(s, i, bot.Command{Name: "forget"}) {
		t.Errorf("a role renamed to an admin role's name may manage")
	}
	i.Member.Roles = nil
	if h.a.canManage(s, i, bot.Command{Name: "forget"}) {
		t.Errorf("a plain member may manage")
	}
	i.Member.Permissions = manageMessages
	if !h.a.canManage(s, i, bot.Command{Name: "forget"}) || h.a.canManage(s, i, bot.Command{Name: "card", Args: "set x"}) {
		t.Errorf("Manage Messages should allow /forget but not /card set")
	}
}

func TestSlowCommandIsDeferredAndTheReplyGoesToTheChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{tuning: func(tu *tuning) { tu.ackAfter = 200 * time.Millisecond }})
	h.say("Hello.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello.") }, "the first reply")
	h.model.Script(openaitest.Answer{Text: "A second thought, slowly.", ChunkSize: 4, ChunkDelay: 100 * time.Millisecond})
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "regen"})
	waitFor(t, 10*time.Second, func() bool {
		m := h.characterMessages(h.channel)
		return len(m) == 2 && m[1].Content == "A second thought, slowly."
	}, "the regenerated reply")
	cb := ix.Callbacks()
	if len(cb) != 1 || cb[0].Type != 5 {
		t.Fatalf("callbacks = %+v, want one deferral (type 5)", cb)
	}
	waitFor(t, 5*time.Second, func() bool {
		m, ok := ix.Original()
		return ok && m.Deleted
	}, "the placeholder removed")
}

func TestQuickCommandAnswersEphemerally(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "help", Locale: "en-US"})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the answer")
	cb := ix.Callbacks()
	m := ix.Messages()[0]
	if len(cb) != 1 || cb[0].Type != 4 || !m.Ephemeral || !strings.Contains(m.Content, "/forget") {
		t.Errorf("callbacks %+v, answer %+v: want one ephemeral message listing the commands", cb, m)
	}

	ix = h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "persona",
		Options: map[string]string{"name": "Ada Lovelace", "description": "a curious engineer"}})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the persona answer")
	per, err := h.store.Persona(context.Background(), "discord:"+h.ada.ID)
	if err != nil || per.Name != "Ada Lovelace" || per.Description != "a curious engineer" {
		t.Errorf("persona = %+v (%v)", per, err)
	}

	room := h.discord.AddChannel(h.guild, "unbound")
	ix = h.discord.Command(discordtest.Slash{ChannelID: room, User: h.ada, Permissions: member, Name: "new"})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "the refusal")
	if m := ix.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "/card set") {
		t.Errorf("/new in an unbound channel answered %+v", m)
	}
	if _, err := h.store.Channel(context.Background(), "discord:"+room); err == nil {
		t.Errorf("/new bound an unbound channel")
	}
}

func TestButtonForAnUnknownQuestionChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "help"})
	waitFor(t, 5*time.Second, func() bool { return len(ix.Messages()) == 1 }, "a message to click on")
	click := h.discord.Click(ix.Messages()[0].ID, confirmYes+"no-such-token", h.ada, manageMessages)
	waitFor(t, 5*time.Second, func() bool {
		m, ok := click.Original()
		return ok && strings.Contains(m.Content, "expired or was already answered")
	}, "the question replaced by the outcome")
	if cb := click.Callbacks(); len(cb) != 1 || cb[0].Type != 6 {
		t.Errorf("callbacks = %+v, want one deferred update", cb)
	}
}

// forgetQuestion runs /forget and returns the interaction and the token of
// its question.
func (h *harness) forgetQuestion(user discordtest.User, perms int64) (*discordtest.Interaction, string, string) {
	h.t.Helper()
	ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: user, Permissions: perms, Name: "forget"})
	waitFor(h.t, 5*time.Second, func() bool { return len(ix.Messages()) > 0 }, "the /forget answer")
	m := ix.Messages()[0]
	if strings.Contains(m.Content, "Unknown command") {
		h.t.Fatal("the pipeline does not know /forget")
	}
	c := string(m.Components)
	i := strings.Index(c, confirmYes)
	if i < 0 {
		return ix, "", m.ID
	}
	token, _, _ := strings.Cut(c[i+len(confirmYes):], `"`)
	if !m.Ephemeral || !strings.Contains(c, confirmNo+token) {
		h.t.Errorf("question %+v: want an ephemeral message with confirm and cancel buttons", m)
	}
	return ix, token, m.ID
}

func (h *harness) chatMessages(chatID string) int64 {
	var n int64
	h.store.DB().Model(&models.Message{}).Where("chat_id = ?", chatID).Count(&n)
	return n
}

func TestForgetConfirmCancelExpiryAndRefusal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("Remember the red key.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "red key") }, "the reply")
	ch, err := h.store.Channel(context.Background(), "discord:"+h.channel)
	if err != nil {
		t.Fatal(err)
	}
	chat := ch.CurrentChatID
	// The reply shows while it streams; it is stored when it is done.
	waitFor(t, 10*time.Second, func() bool { return h.chatMessages(chat) == 3 }, "the greeting, message and reply stored")
	before := h.chatMessages(chat)

	t.Run("unprivileged member is refused", func(t *testing.T) {
		_, token, id := h.forgetQuestion(h.bob, member)
		if token != "" {
			t.Fatalf("a member without Manage Messages was asked to confirm")
		}
		if m, _ := h.discord.Message(id); !strings.Contains(m.Content, "Only members") {
			t.Errorf("refusal = %q", m.Content)
		}
	})
	t.Run("cancel changes nothing", func(t *testing.T) {
		_, token, id := h.forgetQuestion(h.ada, manageMessages)
		click := h.discord.Click(id, confirmNo+token, h.ada, manageMessages)
		waitFor(t, 5*time.Second, func() bool {
			m, _ := click.Original()
			return strings.Contains(m.Content, "Cancelled") && (len(m.Components) == 0 || string(m.Components) == "[]")
		}, "the cancellation")
		if n := h.chatMessages(chat); n != before {
			t.Errorf("messages after cancel = %d, want %d", n, before)
		}
	})
	t.Run("expired question loses its buttons and changes nothing", func(t *testing.T) {
		_, token, id := h.forgetQuestion(h.ada, manageMessages)
		// The timer is set once the question's message is posted, which
		// the test may see first.
		var timer *time.Timer
		waitFor(t, 5*time.Second, func() bool {
			h.a.confirms.mu.Lock()
			defer h.a.confirms.mu.Unlock()
			timer = h.a.confirms.m[token]
			return timer != nil
		}, "the question's expiry timer")
		timer.Reset(0)
		waitFor(t, 5*time.Second, func() bool {
			m, _ := h.discord.Message(id)
			return strings.Contains(m.Content, "has expired") && (len(m.Components) == 0 || string(m.Components) == "[]")
		}, "the buttons taken off")
		h.clock.advance(bot.ConfirmTTL + time.Minute)
		click := h.discord.Click(id, confirmYes+token, h.ada, manageMessages)
		waitFor(t, 5*time.Second, func() bool {
			m, _ := click.Original()
			return strings.Contains(m.Content, "expired")
		}, "the expiry answer")
		if n := h.chatMessages(chat); n != before {
			t.Errorf("messages after an expired confirm = %d, want %d", n, before)
		}
	})
	t.Run("confirm purges the chat", func(t *testing.T) {
		_, token, id := h.forgetQuestion(h.ada, manageMessages)
		click := h.discord.Click(id, confirmYes+token, h.ada, manageMessages)
		waitFor(t, 10*time.Second, func() bool {
			m, _ := click.Original()
			return strings.Contains(m.Content, "Forgotten")
		}, "the outcome in place of the question")
		if n := h.chatMessages(chat); n != 0 {
			t.Errorf("the forgotten chat still has %d messages", n)
		}
		if m, _ := click.Original(); len(m.Components) > 0 && string(m.Components) != "[]" {
			t.Errorf("buttons still on the answered question: %s", m.Components)
		}
		// The channel goes on with a new chat, opened by the greeting.
		waitFor(t, 10*time.Second, func() bool {
			m := h.characterMessages(h.channel)
			return len(m) == 2 && strings.HasPrefix(m[1].Content, "*")
		}, "the greeting of the new chat")
	})
}
