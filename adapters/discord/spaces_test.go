package discord

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// moderator may set a channel's card and erase its memory.
const moderator = manageChannels | manageMessages

// spaceResponder plays every side of the model for the memory layers: the
// recorder (every present cast member perceives each event verbatim),
// reflection (one belief in the character's words, quoting its newest
// perception), belief checks (compatible), and the scribe (summaries,
// recaps, and residents that carry each recap's last message as a fact).
func spaceResponder() func(openaitest.Request) openaitest.Answer {
	scribe := memorytest.Remembering()
	return func(req openaitest.Request) openaitest.Answer {
		switch {
		case len(memorytest.RecorderEvents(req)) > 0:
			return openaitest.Answer{Text: memorytest.Recorder(req)}
		case memorytest.IsBeliefCheck(req):
			return openaitest.Answer{Text: `{"compatible": true, "against": []}`}
		case memorytest.IsReflection(req):
			return openaitest.Answer{Text: reflectOnGateWord(req)}
		}
		return scribe(req)
	}
}

// reflectOnGateWord answers a reflection with one belief, supported by
// every perception shown, in the words of the first that tells a gate
// word.
func reflectOnGateWord(req openaitest.Request) string {
	name, ps, _ := memorytest.ReflectionShown(req)
	if len(ps) == 0 {
		return "{}"
	}
	ids, text := []string{}, ps[0].Text
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	for _, p := range ps {
		if strings.Contains(p.Text, "gate word") {
			text = p.Text
			break
		}
	}
	b, _ := json.Marshal(map[string]any{"add": []map[string]any{{"text": name + " holds: " + text, "confidence": "likely", "supports": ids}}})
	return string(b)
}

// waitReply waits for the character's reply in channelID to the message
// that carried quote (the fake model echoes it).
func (h *harness) waitReply(channelID, quote string) {
	h.t.Helper()
	waitFor(h.t, 15*time.Second, func() bool {
		for _, m := range h.characterMessages(channelID) {
			if strings.Contains(m.Content, quote) && strings.Contains(m.Content, "listening") {
				return true
			}
		}
		return false
	}, "the reply to %q in %s", quote, channelID)
}

// setCard binds the test card to channelID with /card set, as a member who
// may manage the channel does, and waits for the greeting.
func (h *harness) setCard(channelID string) {
	h.t.Helper()
	ix := h.discord.Command(discordtest.Slash{ChannelID: channelID, User: h.ada, Permissions: moderator, Name: "card", Sub: "set",
		Options: map[string]string{"card": "Maren"}})
	waitFor(h.t, 10*time.Second, func() bool { return len(ix.Messages()) >= 1 && len(h.characterMessages(channelID)) >= 1 },
		"/card set and the greeting in %s", channelID)
}

// currentChat is the stored current chat of a Discord channel.
func (h *harness) currentChat(channelID string) models.Chat {
	h.t.Helper()
	ctx := context.Background()
	ch, err := h.store.Channel(ctx, "discord:"+channelID)
	if err != nil {
		h.t.Fatalf("channel %s: %v", channelID, err)
	}
	chat, err := h.store.Chat(ctx, ch.CurrentChatID)
	if err != nil {
		h.t.Fatalf("chat of channel %s: %v", channelID, err)
	}
	return chat
}

// tell has Ada tell the character word in channelID over three turns, then
// has the character reflect on it and its memory written (recap, then
// consolidation of the card in the chat's space). It returns the chat.
func (h *harness) tell(channelID, word string) models.Chat {
	h.t.Helper()
	ctx := context.Background()
	for _, line := range []string{
		"Listen well: the gate word is " + word + ".",
		"Say it back to me: " + word + ".",
		"Never forget the gate word " + word + ", Maren.",
	} {
		h.discord.Post(discordtest.Post{ChannelID: channelID, Author: h.ada, Content: line})
		h.waitReply(channelID, line)
	}
	chat := h.currentChat(channelID)
	if res, err := h.mem.Record(ctx, chat.ID); err != nil {
		h.t.Fatalf("record %s: %+v, %v", channelID, res, err)
	}
	if res, err := h.mem.Reflect(ctx, chat.ID, true); err != nil || res.Outcome != memory.Written {
		h.t.Fatalf("reflect in %s: %+v, %v", channelID, res, err)
	}
	if res, err := h.mem.Recap(ctx, chat.ID); err != nil || res.Outcome != memory.Written {
		h.t.Fatalf("recap in %s: %+v, %v", channelID, res, err)
	}
	if res, err := h.mem.Consolidate(ctx, chat.CardID, chat.SpaceID); err != nil || res.Outcome != memory.Written {
		h.t.Fatalf("consolidation of %s: %+v, %v", chat.SpaceID, res, err)
	}
	return chat
}

// beliefWith is the id of a belief of space whose text holds word, "" for
// none.
func (h *harness) beliefWith(space, word string) string {
	h.t.Helper()
	bs, err := h.store.Beliefs(context.Background(), space, "")
	if err != nil {
		h.t.Fatal(err)
	}
	for _, b := range bs {
		if strings.Contains(b.Text, word) {
			return b.ID
		}
	}
	return ""
}

// TestPrivateChannelStoryStaysPrivate: with discord.space at its default
// (audience), what Maren was told in a private channel (@everyone denied
// VIEW_CHANNEL) reaches no prompt of hers in a public channel of the same
// guild — not through the resident summary, recall or a belief — while a
// second public channel does get what the first public one was told (the
// control). A member who may manage the private channel cannot delete the
// public channels' recap or belief from there; its own belief they can.
func TestPrivateChannelStoryStaysPrivate(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			const secret, open = "Quillfeather", "Larkspur"
			var backRoom, annex string
			h := newHarness(t, setup{dsn: b.DSN, record: true,
				inGuild: func(d *discordtest.Server, guild string) {
					backRoom = d.AddPrivateChannel(guild, "back-room")
					annex = d.AddChannel(guild, "annex")
				},
				tuning: func(tu *tuning) { tu.editInterval = 20 * time.Millisecond },
			})
			h.model.SetResponder(spaceResponder())
			ctx := context.Background()
			h.setCard(backRoom)
			h.setCard(annex)

			hidden := h.tell(backRoom, secret)
			told := h.tell(h.channel, open)
			if hidden.SpaceID == told.SpaceID {
				t.Errorf("the private channel's chat is in the public space %s", told.SpaceID)
			}
			if h.beliefWith(hidden.SpaceID, secret) == "" {
				bs, _ := h.store.Beliefs(ctx, hidden.SpaceID, "")
				t.Fatalf("no belief of the private channel holds %s: the test proves nothing; beliefs: %+v", secret, bs)
			}

			probe := "Do you know the words " + open + " and " + secret + "? (annex)"
			h.discord.Post(discordtest.Post{ChannelID: annex, Author: h.ada, Content: probe})
			h.waitReply(annex, "(annex)")
			req := memorytest.TurnRequest(t, h.model, "(annex)")
			if prev := memorytest.Previously(req); !strings.Contains(prev, open) {
				t.Errorf("the annex's resident summary lacks the public channel's %s; previously = %q", open, prev)
			}
			recalled := false
			for _, m := range req.Messages {
				if m.Role == "system" && strings.Contains(m.Content, "[Remembered]") && strings.Contains(m.Content, open) {
					recalled = true
				}
				if m.Role == "user" && strings.Contains(m.Content, probe) {
					continue
				}
				if strings.Contains(strings.ToLower(m.Content), strings.ToLower(secret)) {
					t.Errorf("the private channel's %s reached a public channel's %s message: %q", secret, m.Role, m.Content)
				}
			}
			if !recalled {
				t.Errorf("the annex's recall block lacks the public channel's %s", open)
			}
			annexSpace := h.currentChat(annex).SpaceID
			if annexSpace != told.SpaceID {
				t.Errorf("the second public channel's space = %s, want the first's, %s", annexSpace, told.SpaceID)
			}
			if h.beliefWith(annexSpace, open) == "" {
				t.Errorf("the public space has no belief with %s", open)
			}
			if id := h.beliefWith(annexSpace, secret); id != "" {
				t.Errorf("the public space holds belief %s with the private %s", id, secret)
			}
			if r, err := h.store.Resident(ctx, told.CardID, annexSpace); err != nil || strings.Contains(r, secret) {
				t.Errorf("the public resident holds %s (%v): %q", secret, err, r)
			}

			// A moderator of the private channel, there: the public recap
			// and belief are not theirs to delete; the private belief is.
			publicBelief, privateBelief := h.beliefWith(told.SpaceID, open), h.beliefWith(hidden.SpaceID, secret)
			admin := func(name, action string) string {
				ix := h.discord.Command(discordtest.Slash{ChannelID: backRoom, User: h.bob, Permissions: moderator, Name: name,
					Options: map[string]string{"action": action}})
				waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) >= 1 }, "/%s %s", name, action)
				return ix.Messages()[len(ix.Messages())-1].Content
			}
			if got := admin("memory", "delete-recap "+told.ID); !strings.Contains(got, "no chat") && !strings.Contains(got, "No chat") {
				t.Errorf("/memory delete-recap of the public chat in the private channel answered %q", got)
			}
			if _, err := h.store.CardRecap(ctx, told.ID, told.CardID); err != nil {
				t.Errorf("the public chat's recap is gone after a refused delete: %v", err)
			}
			if got := admin("belief", "forget "+publicBelief); !strings.Contains(got, "no belief") {
				t.Errorf("/belief forget of the public belief in the private channel answered %q", got)
			}
			if h.beliefWith(told.SpaceID, open) != publicBelief {
				t.Errorf("the public belief %s was deleted from the private channel", publicBelief)
			}
			if got := admin("belief", "forget "+privateBelief); !strings.Contains(got, "deleted") {
				t.Errorf("/belief forget of the private channel's own belief answered %q", got)
			}
			if id := h.beliefWith(hidden.SpaceID, secret); id == privateBelief {
				t.Errorf("the private channel's belief %s is still there", id)
			}
		})
	}
}

// TestSpaceSettingDecidesWhoSharesMemory: each discord.space value puts
// the guild's channels and threads in the spaces it says, as the chats
// they start are stored. A public thread shares its parent's audience and
// a private thread has its own; with "guild" everything stays in the
// guild's space, under the id it always had.
func TestSpaceSettingDecidesWhoSharesMemory(t *testing.T) {
	places := []string{"hall", "annex", "back-room", "hall thread", "private thread", "back-room thread"}
	tests := []struct {
		space string
		// want maps a place to the channel whose own space it is in, ""
		// for the guild's.
		want map[string]string
	}{
		{config.SpaceAudience, map[string]string{"hall": "", "annex": "", "back-room": "back-room", "hall thread": "",
			"private thread": "private thread", "back-room thread": "back-room"}},
		{config.SpaceGuild, map[string]string{"hall": "", "annex": "", "back-room": "", "hall thread": "",
			"private thread": "", "back-room thread": ""}},
		{config.SpaceChannel, map[string]string{"hall": "hall", "annex": "annex", "back-room": "back-room", "hall thread": "hall",
			"private thread": "private thread", "back-room thread": "back-room"}},
	}
	for _, tt := range tests {
		t.Run(tt.space, func(t *testing.T) {
			t.Parallel()
			for _, b := range testenv.Backends(t) {
				t.Run(b.Name, func(t *testing.T) {
					ids := map[string]string{}
					h := newHarness(t, setup{dsn: b.DSN,
						inGuild: func(d *discordtest.Server, guild string) {
							ids["annex"] = d.AddChannel(guild, "annex")
							ids["back-room"] = d.AddPrivateChannel(guild, "back-room")
						},
						cfg: func(c *config.Discord) { c.Space = tt.space },
					})
					ids["hall"] = h.channel
					// The harness bound the hall before the bot ran, in the
					// guild's space: with "channel" its first turn moves it.
					h.setCard(ids["annex"])
					h.setCard(ids["back-room"])
					ids["hall thread"] = h.discord.CreateThread(h.channel, "hall thread", h.ada)
					ids["private thread"] = h.discord.CreatePrivateThread(h.channel, "private thread", h.ada)
					ids["back-room thread"] = h.discord.CreateThread(ids["back-room"], "back-room thread", h.ada)
					for _, pl := range places {
						line := "Hello from the " + pl + "."
						h.discord.Post(discordtest.Post{ChannelID: ids[pl], Author: h.ada, Content: line})
						h.waitReply(ids[pl], line)
					}
					for _, pl := range places {
						want := "discord:guild:" + h.guild
						if own := tt.want[pl]; own != "" {
							want = "discord:channel:" + h.guild + "/" + ids[own]
						}
						chat := h.currentChat(ids[pl])
						if chat.SpaceID != want {
							t.Errorf("%s: the chat's space = %s, want %s", pl, chat.SpaceID, want)
						}
						if ch, err := h.store.Channel(context.Background(), "discord:"+ids[pl]); err != nil || ch.SpaceID != want {
							t.Errorf("%s: the channel's space = %s (%v), want %s", pl, ch.SpaceID, err, want)
						}
					}
				})
			}
		})
	}
}

// TestChannelMadePrivateStartsOverInItsOwnSpace: when a public channel's
// overwrites come to deny @everyone VIEW_CHANNEL (CHANNEL_UPDATE), its next
// message opens a new chat in the channel's own space, and the public chat
// stays in the guild's with all it was told, out of the private chat's
// prompts and out of /forget's reach from there. Made public again, the
// channel returns to the guild's space, again with a new chat; taking
// VIEW_CHANNEL from @everyone guild-wide (GUILD_ROLE_UPDATE) makes every
// channel private.
func TestChannelMadePrivateStartsOverInItsOwnSpace(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			var annex string
			h := newHarness(t, setup{dsn: b.DSN, inGuild: func(d *discordtest.Server, guild string) { annex = d.AddChannel(guild, "annex") }})
			ctx := context.Background()
			guildSpace, ownSpace := "discord:guild:"+h.guild, "discord:channel:"+h.guild+"/"+h.channel
			h.say("The public word is Larkspur. (before)")
			h.waitReply(h.channel, "(before)")
			before := h.currentChat(h.channel)
			if before.SpaceID != guildSpace {
				t.Fatalf("the public chat's space = %s, want %s", before.SpaceID, guildSpace)
			}

			h.discord.SetOverwrites(h.channel, discordtest.Overwrite{ID: h.guild, Type: 0, Deny: discordtest.ViewChannel})
			h.say("Who is listening now? (private)")
			h.waitReply(h.channel, "(private)")
			after := h.currentChat(h.channel)
			if after.ID == before.ID || after.SpaceID != ownSpace {
				t.Fatalf("after the channel was made private: chat %s in %s, want a new chat in %s (was %s)", after.ID, after.SpaceID, ownSpace, before.ID)
			}
			if old, err := h.store.Chat(ctx, before.ID); err != nil || old.SpaceID != guildSpace || h.chatMessages(before.ID) < 3 {
				t.Errorf("the public chat after the move: %+v, %d messages (%v); want it whole in %s", old, h.chatMessages(before.ID), err, guildSpace)
			}
			for _, m := range memorytest.TurnRequest(t, h.model, "(private)").Messages {
				if strings.Contains(m.Content, "Larkspur") {
					t.Errorf("the public chat reached the private chat's %s message: %q", m.Role, m.Content)
				}
			}
			ix := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: moderator, Name: "forget",
				Options: map[string]string{"chat": before.ID}})
			waitFor(t, 10*time.Second, func() bool { return len(ix.Messages()) >= 1 }, "the answer to /forget")
			if got := ix.Messages()[0].Content; !strings.Contains(got, "No chat") {
				t.Errorf("/forget of the public chat in the channel made private answered %q", got)
			}

			h.discord.SetOverwrites(h.channel)
			h.say("And now? (public again)")
			h.waitReply(h.channel, "(public again)")
			again := h.currentChat(h.channel)
			if again.ID == after.ID || again.ID == before.ID || again.SpaceID != guildSpace {
				t.Errorf("made public again: chat %s in %s, want a new chat in %s", again.ID, again.SpaceID, guildSpace)
			}
			for _, m := range memorytest.TurnRequest(t, h.model, "(public again)").Messages {
				if strings.Contains(m.Content, "Who is listening now") {
					t.Errorf("the private chat reached the public chat's %s message: %q", m.Role, m.Content)
				}
			}

			h.setCard(annex)
			h.discord.SetEveryone(h.guild, 2248473465835073&^discordtest.ViewChannel)
			h.discord.Post(discordtest.Post{ChannelID: annex, Author: h.ada, Content: "Anyone? (closed guild)"})
			h.waitReply(annex, "(closed guild)")
			if got, want := h.currentChat(annex).SpaceID, "discord:channel:"+h.guild+"/"+annex; got != want {
				t.Errorf("with @everyone unable to view channels, the annex's space = %s, want %s", got, want)
			}
		})
	}
}
