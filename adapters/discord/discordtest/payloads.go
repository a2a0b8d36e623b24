package discordtest

import "encoding/json"

// These build Discord's JSON from the sample payloads, so that every object
// the server sends has the fields a real one has.

func (s *Server) userJSON(u User) obj {
	o := s.sample("rest/user")
	o["id"], o["username"], o["bot"] = u.ID, u.Username, u.Bot
	o["global_name"] = nil
	if u.GlobalName != "" {
		o["global_name"] = u.GlobalName
	}
	for _, k := range []string{"email", "verified", "mfa_enabled", "locale", "premium_type", "bio"} {
		delete(o, k)
	}
	return o
}

func (s *Server) channelJSON(c Channel) obj {
	if c.IsThread() {
		o := s.sample("gateway/thread_create")["d"].(obj)
		delete(o, "newly_created")
		o["id"], o["guild_id"], o["parent_id"], o["name"], o["type"] = c.ID, c.GuildID, c.ParentID, c.Name, c.Type
		o["member"] = nil
		if c.Type == 12 {
			// Only a private thread says whether its members may invite.
			o["thread_metadata"].(obj)["invitable"] = true
		}
		return o
	}
	o := s.sample("gateway/channel")
	o["id"], o["name"], o["type"] = c.ID, c.Name, c.Type
	if c.Type == 1 {
		for _, k := range []string{"guild_id", "parent_id", "position", "permission_overwrites", "nsfw", "topic", "rate_limit_per_user", "icon_emoji", "version"} {
			delete(o, k)
		}
		o["recipients"] = []obj{s.userJSON(c.Recipient)}
		return o
	}
	o["guild_id"] = c.GuildID
	ows := []obj{}
	for _, ow := range c.Overwrites {
		ows = append(ows, obj{"id": ow.ID, "type": ow.Type, "allow": itoa64(ow.Allow), "deny": itoa64(ow.Deny)})
	}
	o["permission_overwrites"] = ows
	o["parent_id"] = nil
	if c.ParentID != "" {
		o["parent_id"] = c.ParentID
	}
	return o
}

func (s *Server) webhookJSON(h *webhook) obj {
	o := s.sample("rest/webhook")
	o["id"], o["token"], o["channel_id"], o["guild_id"], o["name"] = h.id, h.token, h.channelID, h.guildID, h.name
	if h.byApp {
		o["application_id"] = s.bot.ID
		o["user"] = s.userJSON(s.bot)
	} else {
		o["application_id"] = nil
		o["user"] = s.userJSON(User{ID: "1100000000000000077", Username: "someone"})
	}
	return o
}

// messageJSON is a message object as REST returns it.
func (s *Server) messageJSON(m Message) obj {
	o := s.sample("rest/message")
	o["id"], o["channel_id"], o["content"], o["flags"] = m.ID, m.ChannelID, m.Content, m.Flags
	o["timestamp"] = timestamp(m.Created)
	if n := len(m.Edits); n > 0 {
		o["edited_timestamp"] = timestamp(m.Edits[n-1])
	}
	author := s.userJSON(User{ID: m.AuthorID, Username: m.Username, Bot: m.Bot})
	if m.WebhookID != "" && m.WebhookID != s.bot.ID {
		author["avatar"] = nil
		author["discriminator"] = "0000"
		o["webhook_id"] = m.WebhookID
		o["application_id"] = s.bot.ID
	}
	if m.Interaction != "" {
		o["webhook_id"] = s.bot.ID
		o["application_id"] = s.bot.ID
		o["type"] = 20
	}
	o["author"] = author
	if len(m.Components) > 0 && string(m.Components) != "null" {
		o["components"] = json.RawMessage(m.Components)
	}
	if m.ReplyTo != "" {
		o["type"] = 19
		o["message_reference"] = obj{"type": 0, "channel_id": m.ChannelID, "message_id": m.ReplyTo, "guild_id": m.GuildID}
	}
	if m.GuildID != "" {
		o["guild_id"] = m.GuildID
	}
	atts := []obj{}
	for _, a := range m.Attachments {
		atts = append(atts, attachmentJSON(a))
	}
	o["attachments"] = atts
	o["embeds"] = []obj{}
	if m.embeds != nil {
		o["embeds"] = m.embeds
	}
	return o
}

// messageEvent is the d of MESSAGE_CREATE / MESSAGE_UPDATE for m.
func (s *Server) messageEvent(kind string, m Message, author User, nick string, mentions []User, ref *Message) obj {
	o := s.sample("gateway/" + kind)["d"].(obj)
	rest := s.messageJSON(m)
	for _, k := range []string{"id", "channel_id", "content", "flags", "timestamp", "edited_timestamp", "type",
		"webhook_id", "application_id", "message_reference", "components", "attachments", "embeds"} {
		if v, ok := rest[k]; ok {
			o[k] = v
		}
	}
	delete(o, "nonce")
	a := o["author"].(obj)
	a["id"], a["username"] = author.ID, author.Username
	a["global_name"] = nil
	if author.GlobalName != "" {
		a["global_name"] = author.GlobalName
	}
	if author.Bot {
		a["bot"] = true
	}
	var ms []obj
	for _, u := range mentions {
		ms = append(ms, s.userJSON(u))
	}
	if ms == nil {
		ms = []obj{}
	}
	o["mentions"] = ms
	if ref != nil {
		o["referenced_message"] = s.messageJSON(*ref)
	} else if kind == "message_create" {
		o["referenced_message"] = nil
	}
	if m.GuildID == "" || m.WebhookID != "" {
		delete(o, "member")
		delete(o, "guild_id")
		if m.GuildID != "" {
			o["guild_id"] = m.GuildID
		}
	} else {
		o["guild_id"] = m.GuildID
		mem := o["member"].(obj)
		mem["nick"] = nil
		if nick != "" {
			mem["nick"] = nick
		}
	}
	return o
}

// echoCreate tells the gateway about a message the client wrote.
func (s *Server) echoCreate(m Message) {
	if !s.opt.Echo {
		return
	}
	author := User{ID: m.AuthorID, Username: m.Username, Bot: m.Bot}
	s.dispatch("MESSAGE_CREATE", s.messageEvent("message_create", m, author, "", nil, nil))
}

func (s *Server) echoUpdate(m Message) {
	if !s.opt.Echo || m.Ephemeral {
		return
	}
	author := User{ID: m.AuthorID, Username: m.Username, Bot: m.Bot}
	s.dispatch("MESSAGE_UPDATE", s.messageEvent("message_update", m, author, "", nil, nil))
}

func (s *Server) echoDelete(m Message) {
	if !s.opt.Echo || m.Ephemeral {
		return
	}
	d := obj{"id": m.ID, "channel_id": m.ChannelID}
	if m.GuildID != "" {
		d["guild_id"] = m.GuildID
	}
	s.dispatch("MESSAGE_DELETE", d)
}
