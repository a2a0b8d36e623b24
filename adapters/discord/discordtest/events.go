package discordtest

import (
	"encoding/json"
	"strconv"
	"time"
)

// Post is a message a user writes.
type Post struct {
	ChannelID string
	Author    User
	// Nick is the author's guild nickname.
	Nick     string
	Content  string
	Mentions []User
	// ReplyTo is the id of the message this one replies to.
	ReplyTo string
	// WebhookID makes it a message of that webhook.
	WebhookID string
	// Type is Discord's message type; 0 (default) or 19 (reply).
	Type int
	// Attachments are the message's files, served by the CDN; Flags its
	// flags (VoiceMessageFlag with one VoiceMessage attachment); Embeds
	// what Discord made of its links.
	Attachments []Attachment
	Flags       int
	Embeds      []Embed
}

// Post stores a message and dispatches MESSAGE_CREATE; it returns the
// message's id.
func (s *Server) Post(p Post) string {
	s.t.Helper()
	c, ok := s.Channel(p.ChannelID)
	if !ok {
		s.t.Fatalf("discordtest: Post to unknown channel %s", p.ChannelID)
	}
	msg := &Message{ChannelID: c.ID, GuildID: c.GuildID, Content: p.Content, AuthorID: p.Author.ID,
		Username: p.Author.Username, Bot: p.Author.Bot, WebhookID: p.WebhookID, ReplyTo: p.ReplyTo,
		Flags: p.Flags, Attachments: s.storeUploads(c.ID, p.Attachments), Embeds: p.Embeds}
	for _, e := range p.Embeds {
		msg.embeds = append(msg.embeds, s.embedJSON(e))
	}
	s.addMessage(msg, false)
	var ref *Message
	if p.ReplyTo != "" {
		if r, ok := s.Message(p.ReplyTo); ok {
			ref = &r
		}
	}
	d := s.messageEvent("message_create", *msg, p.Author, p.Nick, p.Mentions, ref)
	if p.Type != 0 {
		d["type"] = p.Type
	}
	s.dispatch("MESSAGE_CREATE", d)
	return msg.ID
}

// Redeliver dispatches MESSAGE_CREATE again for a user's message, as Discord
// may after a reconnect.
func (s *Server) Redeliver(messageID string) {
	s.t.Helper()
	m, ok := s.Message(messageID)
	if !ok {
		s.t.Fatalf("discordtest: Redeliver of unknown message %s", messageID)
	}
	author := User{ID: m.AuthorID, Username: m.Username, Bot: m.Bot}
	s.dispatch("MESSAGE_CREATE", s.messageEvent("message_create", m, author, "", nil, nil))
}

// Edit changes a user's message and dispatches MESSAGE_UPDATE.
func (s *Server) Edit(messageID, content string) {
	s.t.Helper()
	s.mu.Lock()
	m, ok := s.messages[messageID]
	if ok {
		m.Content = content
		m.Edits = append(m.Edits, time.Now())
	}
	var msg Message
	if ok {
		msg = *m
	}
	s.mu.Unlock()
	if !ok {
		s.t.Fatalf("discordtest: Edit of unknown message %s", messageID)
	}
	author := User{ID: msg.AuthorID, Username: msg.Username, Bot: msg.Bot}
	s.dispatch("MESSAGE_UPDATE", s.messageEvent("message_update", msg, author, "", nil, nil))
}

// CreateThread opens a public thread under a channel and dispatches
// THREAD_CREATE; it returns the thread's id.
func (s *Server) CreateThread(parentID, name string, owner User) string {
	s.t.Helper()
	return s.createThread(parentID, name, owner, 11)
}

func (s *Server) createThread(parentID, name string, owner User, kind int) string {
	s.t.Helper()
	p, ok := s.Channel(parentID)
	if !ok {
		s.t.Fatalf("discordtest: thread under unknown channel %s", parentID)
	}
	id := s.addChannel(Channel{GuildID: p.GuildID, ParentID: parentID, Name: name, Type: kind})
	d := s.sample("gateway/thread_create")["d"].(obj)
	d["id"], d["guild_id"], d["parent_id"], d["name"], d["owner_id"], d["type"] = id, p.GuildID, parentID, name, owner.ID, kind
	if kind == 12 {
		d["thread_metadata"].(obj)["invitable"] = true
	}
	d["member_ids_preview"] = []string{owner.ID}
	mem := d["member"].(obj)
	mem["id"], mem["user_id"] = id, owner.ID
	s.dispatch("THREAD_CREATE", d)
	return id
}

// Slash is a slash command a user runs.
type Slash struct {
	ChannelID string
	User      User
	// Permissions are the member's permissions in the channel.
	Permissions int64
	Roles       []string
	Name        string
	// Sub is the subcommand, if any.
	Sub string
	// Options are string options by name.
	Options map[string]string
	Locale  string
}

// Command dispatches INTERACTION_CREATE for a slash command.
func (s *Server) Command(c Slash) *Interaction {
	s.t.Helper()
	return s.interact(c, 2, "", "", "")
}

// Autocomplete dispatches an autocomplete interaction with option focused
// holding typed.
func (s *Server) Autocomplete(c Slash, focused, typed string) *Interaction {
	s.t.Helper()
	if c.Options == nil {
		c.Options = map[string]string{}
	}
	c.Options[focused] = typed
	return s.interact(c, 4, focused, "", "")
}

// Click presses a button (by custom id) on a message.
func (s *Server) Click(messageID, customID string, user User, permissions int64) *Interaction {
	s.t.Helper()
	m, ok := s.Message(messageID)
	if !ok {
		s.t.Fatalf("discordtest: click on unknown message %s", messageID)
	}
	return s.interact(Slash{ChannelID: m.ChannelID, User: user, Permissions: permissions}, 3, "", messageID, customID)
}

func (s *Server) interact(c Slash, kind int, focused, messageID, customID string) *Interaction {
	ch, ok := s.Channel(c.ChannelID)
	if !ok {
		s.t.Fatalf("discordtest: interaction in unknown channel %s", c.ChannelID)
	}
	name := map[int]string{2: "interaction_command", 3: "interaction_component", 4: "interaction_autocomplete"}[kind]
	d := s.sample("gateway/" + name)["d"].(obj)
	s.mu.Lock()
	ix := &interaction{id: s.newIDLocked(), channelID: ch.ID, guildID: ch.GuildID, kind: kind, messageID: messageID}
	ix.token = "ix-" + ix.id + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s.interactions[ix.token] = ix
	s.mu.Unlock()
	d["id"], d["token"], d["channel_id"], d["application_id"] = ix.id, ix.token, ch.ID, s.bot.ID
	if c.Locale != "" {
		d["locale"] = c.Locale
	}
	if ch.GuildID != "" {
		d["guild_id"] = ch.GuildID
		mem := d["member"].(obj)
		mem["user"] = s.userJSON(c.User)
		mem["permissions"] = itoa64(c.Permissions)
		roles := c.Roles
		if roles == nil {
			roles = []string{}
		}
		mem["roles"] = roles
		d["authorizing_integration_owners"] = obj{"0": ch.GuildID}
	} else {
		delete(d, "member")
		delete(d, "guild_id")
		delete(d, "guild_locale")
		delete(d, "guild")
		d["user"] = s.userJSON(c.User)
		d["context"] = 1
		d["authorizing_integration_owners"] = obj{"0": s.bot.ID}
	}
	if chObj, ok := d["channel"]; ok && chObj != nil {
		d["channel"] = s.channelJSON(ch)
	}
	switch kind {
	case 3:
		m, _ := s.Message(messageID)
		msg := s.messageJSON(m)
		msg["flags"] = m.Flags
		d["message"] = msg
		d["data"] = obj{"custom_id": customID, "component_type": 2, "id": 2}
	default:
		d["data"] = s.commandData(c, focused, ch.GuildID)
	}
	s.dispatch("INTERACTION_CREATE", d)
	return &Interaction{s: s, Token: ix.token, ID: ix.id}
}

// commandData is an interaction's data for a slash command.
func (s *Server) commandData(c Slash, focused, guildID string) obj {
	var opts []obj
	for name, v := range c.Options {
		o := obj{"type": 3, "name": name, "value": v}
		if name == focused {
			o["focused"] = true
		}
		opts = append(opts, o)
	}
	if opts == nil {
		opts = []obj{}
	}
	id := s.NewID()
	for _, g := range []string{guildID, ""} {
		if raw, ok := s.RegisteredCommand(g, c.Name); ok {
			var reg struct{ ID string }
			_ = json.Unmarshal(raw, &reg)
			id = reg.ID
			break
		}
	}
	d := obj{"type": 1, "name": c.Name, "id": id}
	if c.Sub != "" {
		d["options"] = []obj{{"type": 1, "name": c.Sub, "options": opts}}
	} else if len(opts) > 0 {
		d["options"] = opts
	}
	return d
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
