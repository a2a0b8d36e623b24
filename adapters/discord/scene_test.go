package discord

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
)

// voices are the webhook messages the characters posted in a channel, in
// order, as "Name: content".
func (h *harness) voices(channelID string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range h.discord.Messages(channelID) {
		if m.WebhookID != "" && m.Interaction == "" {
			out = append(out, m)
		}
	}
	return out
}

// waitVoices waits until n character messages are complete (the fake model
// ends each with "listening") and returns them.
func (h *harness) waitVoices(n int) []discordtest.Message {
	h.t.Helper()
	complete := func() bool {
		v := h.voices(h.channel)
		if len(v) < n {
			return false
		}
		for _, m := range v[:n] {
			if !strings.HasSuffix(m.Content, "listening.") && m.Content != "an impostor" {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(15 * time.Second); !complete(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %d character messages; have %q", n, voiceList(h.voices(h.channel)))
		}
	}
	return h.voices(h.channel)
}

func voiceList(v []discordtest.Message) []string {
	var out []string
	for _, m := range v {
		out = append(out, m.Username+": "+m.Content)
	}
	return out
}

// systemOf is the system prompt of the model's n-th chat request (from 1).
func (h *harness) systemOf(n int) string {
	reqs := h.model.Requests()
	if len(reqs) < n {
		return ""
	}
	for _, m := range reqs[n-1].Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

func TestSceneMentionSpeaksThroughTheNamedCharactersVoice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	h.say("Ilse, is the lake calm tonight?")
	v := h.waitVoices(1)
	if got := v[0]; got.Username != "Ilse" || got.AvatarURL != ilseAvatar {
		t.Errorf("reply posted as %q with avatar %q, want Ilse with %q", got.Username, got.AvatarURL, ilseAvatar)
	}
	if !strings.Contains(h.systemOf(1), "rows the ferry") {
		t.Errorf("the reply was not written from Ilse's card: system prompt %q", h.systemOf(1))
	}

	h.say("Maren, and the lantern?")
	v = h.waitVoices(2)
	if got := v[1]; got.Username != "Maren" || got.AvatarURL != cardAvatar {
		t.Errorf("second reply posted as %q with avatar %q, want Maren with %q", got.Username, got.AvatarURL, cardAvatar)
	}
	if n := len(h.discord.CallsTo("POST /channels/" + h.channel + "/webhooks")); n != 1 {
		t.Errorf("webhooks created = %d, want one for the channel, every voice through it", n)
	}
	if n := h.model.Count(); n != 2 {
		t.Errorf("model calls = %d, want one per reply", n)
	}
}

func TestSceneReplyToAWebhookMessageGoesToItsCharacter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	h.say("Ilse, who are you?")
	ilse := h.waitVoices(1)[0]
	h.say("Maren, and you?")
	if v := h.waitVoices(2); v[1].Username != "Maren" {
		t.Fatalf("second reply by %q, want Maren", v[1].Username)
	}
	// Maren spoke last, so without the reply's signal she would answer.
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Tell me more.", ReplyTo: ilse.ID})
	v := h.waitVoices(3)
	if v[2].Username != "Ilse" || v[2].AvatarURL != ilseAvatar {
		t.Errorf("the answer to a reply to Ilse's message came from %q (%q), want Ilse", v[2].Username, v[2].AvatarURL)
	}
	if !strings.Contains(v[2].Content, "Tell me more.") {
		t.Errorf("Ilse answered %q, not the reply", v[2].Content)
	}

	// A message of another webhook in the channel is nobody's voice: the
	// reply goes to who spoke last (Ilse), not to a name the webhook used.
	foreign := h.discord.AddForeignWebhook(h.channel)
	other := h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: discordtest.User{ID: foreign, Username: "Maren", Bot: true},
		Content: "an impostor", WebhookID: foreign})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Who answers?", ReplyTo: other})
	v = h.waitVoices(5) // the impostor's message is the fourth
	if v[3].WebhookID != foreign || v[4].Username != "Ilse" || !strings.Contains(v[4].Content, "Who answers?") {
		t.Errorf("a reply to another webhook's message was answered by %q, want Ilse (who spoke last)", v[4].Username)
	}
}

func TestSceneTwoMentionsGetTwoRepliesInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	h.say("Maren and Ilse: good evening to you both.")
	v := h.waitVoices(2)
	if len(v) != 2 {
		t.Fatalf("character messages = %d, want 2", len(v))
	}
	if v[0].Username != "Maren" || v[0].AvatarURL != cardAvatar || v[1].Username != "Ilse" || v[1].AvatarURL != ilseAvatar {
		t.Errorf("replies by %q (%q) then %q (%q), want Maren then Ilse with their avatars", v[0].Username, v[0].AvatarURL, v[1].Username, v[1].AvatarURL)
	}
	if !v[0].Created.Before(v[1].Created) && !v[0].Created.Equal(v[1].Created) {
		t.Errorf("Ilse's reply was posted before Maren's")
	}
	if v[0].ID == v[1].ID || v[0].Content == v[1].Content {
		t.Errorf("the two replies share a message: %+v", v)
	}
	if !strings.Contains(h.systemOf(2), "rows the ferry") || strings.Contains(h.systemOf(1), "rows the ferry") {
		t.Errorf("the first reply should come from Maren's card, the second from Ilse's")
	}
}

func TestCastAndWhisperSlashCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	waitFor(t, 5*time.Second, func() bool { _, ok := h.discord.RegisteredCommand("", "whisper"); return ok }, "the slash commands registered")
	raw, _ := h.discord.RegisteredCommand("", "cast")
	var cast struct {
		Options []struct {
			Name    string
			Options []struct {
				Name     string
				Required bool
			}
		}
	}
	if err := json.Unmarshal(raw, &cast); err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, o := range cast.Options {
		subs = append(subs, o.Name)
		if o.Name != "list" && (len(o.Options) != 1 || !o.Options[0].Required) {
			t.Errorf("/cast %s options = %+v, want one required option", o.Name, o.Options)
		}
	}
	if got := strings.Join(subs, " "); got != "list add remove away back" {
		t.Errorf("/cast subcommands = %q", got)
	}
	raw, ok := h.discord.RegisteredCommand("", "whisper")
	if !ok || !strings.Contains(string(raw), `"name":"name"`) || !strings.Contains(string(raw), `"name":"text"`) {
		t.Errorf("/whisper registered as %s (%v), want options name and text", raw, ok)
	}

	list := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "cast", Sub: "list"})
	waitFor(t, 5*time.Second, func() bool { return len(list.Messages()) == 1 }, "the cast list")
	if m := list.Messages()[0]; !m.Ephemeral || !strings.Contains(m.Content, "Maren") || !strings.Contains(m.Content, "Ilse") {
		t.Errorf("/cast list answered %+v, want both names to the caller alone", m)
	}

	refused := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: manageMessages, Name: "cast", Sub: "away",
		Options: map[string]string{"name": "Ilse"}})
	waitFor(t, 5*time.Second, func() bool { return len(refused.Messages()) == 1 }, "the refusal")
	if m := refused.Messages()[0]; strings.Contains(m.Content, "away:") {
		t.Errorf("/cast away without Manage Channels was taken: %q", m.Content)
	}
	away := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageChannels, Name: "cast", Sub: "away",
		Options: map[string]string{"name": "Ilse"}})
	waitFor(t, 5*time.Second, func() bool { return len(away.Messages()) == 1 }, "the away notice")
	if m := away.Messages()[0]; m.Ephemeral || !strings.Contains(m.Content, "Ilse is away") {
		t.Errorf("/cast away answered %+v, want a public notice that Ilse is away", m)
	}
	back := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: manageChannels, Name: "cast", Sub: "back",
		Options: map[string]string{"name": "Ilse"}})
	waitFor(t, 5*time.Second, func() bool { return len(back.Messages()) == 1 }, "the back notice")

	whisper := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "whisper",
		Options: map[string]string{"name": "Ilse", "text": "the key is under the third stone"}})
	waitFor(t, 15*time.Second, func() bool {
		m := whisper.Messages()
		return len(m) == 2 && strings.HasSuffix(m[1].Content, "listening.")
	}, "the whisper's acknowledgement and Ilse's answer")
	msgs := whisper.Messages()
	if !msgs[0].Ephemeral || !strings.Contains(msgs[0].Content, "whispered to Ilse") {
		t.Errorf("the whisper was acknowledged with %+v, want an ephemeral line naming Ilse", msgs[0])
	}
	if !msgs[1].Ephemeral || !strings.HasPrefix(msgs[1].Content, "**Ilse**\n") || !strings.Contains(msgs[1].Content, "third stone") {
		t.Errorf("Ilse's answer %+v, want it to the writer alone under her name", msgs[1])
	}
	for _, m := range h.discord.Messages(h.channel) {
		if strings.Contains(m.Content, "third stone") {
			t.Errorf("the whisper reached the channel: %+v", m)
		}
	}
	if !strings.Contains(h.systemOf(h.model.Count()), "rows the ferry") {
		t.Errorf("the whisper was answered from another card than Ilse's")
	}

	// /memory in a guild channel shows what others were not told: the
	// asker alone sees it.
	mem := h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.bob, Permissions: member, Name: "memory"})
	waitFor(t, 5*time.Second, func() bool { return len(mem.Messages()) >= 1 }, "the memory answer")
	for _, m := range mem.Messages() {
		if !m.Ephemeral {
			t.Errorf("/memory answered publicly: %+v", m)
		}
	}
	for _, cb := range mem.Callbacks() {
		if !cb.Ephemeral {
			t.Errorf("/memory callback %+v is not ephemeral", cb)
		}
	}
}

func TestReplyToACharactersMessageFromBeforeARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{scene: true})
	// The webhook troupe made in an earlier run, and Ilse's message
	// through it then.
	hook := h.discord.AddAppWebhook(h.channel, "troupe", "")
	said := h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: discordtest.User{ID: hook, Username: "Ilse", Bot: true},
		Content: "The lake is calm; I am listening.", WebhookID: hook})
	h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: "Is it always?", ReplyTo: said})
	v := h.waitVoices(2)
	if v[1].Username != "Ilse" || !strings.Contains(v[1].Content, "Is it always?") {
		t.Errorf("a reply to Ilse's message of an earlier run was answered by %q, want Ilse", v[1].Username)
	}
	if n := len(h.discord.CallsTo("POST /channels/" + h.channel + "/webhooks")); n != 0 {
		t.Errorf("webhooks created = %d, want the earlier run's reused", n)
	}

	// In a channel where nobody plays, a reply to some webhook's message
	// creates no webhook there.
	room := h.discord.AddChannel(h.guild, "lobby")
	foreign := h.discord.AddForeignWebhook(room)
	other := h.discord.Post(discordtest.Post{ChannelID: room, Author: discordtest.User{ID: foreign, Username: "Other", Bot: true},
		Content: "news", WebhookID: foreign})
	h.discord.Post(discordtest.Post{ChannelID: room, Author: h.ada, Content: "thanks", ReplyTo: other})
	h.say("Ilse, still there?")
	h.waitVoices(3)
	waitFor(t, 5*time.Second, func() bool { return strings.Contains(h.logs.String(), "message ignored: the channel does not play") }, "the lobby message ignored")
	if n := len(h.discord.CallsTo("POST /channels/" + room + "/webhooks")); n != 0 {
		t.Errorf("a webhook was created in a channel where nobody plays")
	}
}
