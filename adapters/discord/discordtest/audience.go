package discordtest

// Who can see a channel: private channels, permission changes and private
// threads, with the gateway events Discord sends for them.

// AddPrivateChannel adds a text channel that @everyone cannot view (an
// overwrite for the @everyone role denies VIEW_CHANNEL) and, for each of
// roles, one that lets the role in; it returns its id.
func (s *Server) AddPrivateChannel(guildID, name string, roles ...string) string {
	ows := []Overwrite{{ID: guildID, Type: 0, Deny: ViewChannel}}
	for _, r := range roles {
		ows = append(ows, Overwrite{ID: r, Type: 0, Allow: ViewChannel})
	}
	return s.addChannel(Channel{GuildID: guildID, Name: name, Type: 0, Overwrites: ows})
}

// SetOverwrites replaces a channel's permission overwrites and dispatches
// CHANNEL_UPDATE, as Discord does when someone edits them.
func (s *Server) SetOverwrites(channelID string, ows ...Overwrite) {
	s.t.Helper()
	s.mu.Lock()
	c, ok := s.channels[channelID]
	if !ok {
		s.mu.Unlock()
		s.t.Fatalf("discordtest: overwrites of unknown channel %s", channelID)
	}
	c.Overwrites = append([]Overwrite(nil), ows...)
	d := s.channelJSON(*c)
	s.mu.Unlock()
	s.dispatch("CHANNEL_UPDATE", d)
}

// SetEveryone sets the guild's @everyone role permissions and dispatches
// GUILD_ROLE_UPDATE.
func (s *Server) SetEveryone(guildID string, permissions int64) {
	s.t.Helper()
	s.mu.Lock()
	g, ok := s.guilds[guildID]
	if !ok {
		s.mu.Unlock()
		s.t.Fatalf("discordtest: unknown guild %s", guildID)
	}
	g.everyone = permissions
	s.mu.Unlock()
	s.dispatch("GUILD_ROLE_UPDATE", obj{"guild_id": guildID, "role": obj{"id": guildID, "name": "@everyone",
		"permissions": itoa64(permissions), "position": 0, "color": 0, "hoist": false, "managed": false,
		"mentionable": false, "icon": nil, "unicode_emoji": nil, "flags": 0}})
}

// CreatePrivateThread opens a private thread (type 12) under a channel and
// dispatches THREAD_CREATE; it returns the thread's id.
func (s *Server) CreatePrivateThread(parentID, name string, owner User) string {
	s.t.Helper()
	return s.createThread(parentID, name, owner, 12)
}
