package discordtest

import "net/http"

// rolesJSONLocked is a guild's roles as GET /guilds/{id}/roles answers,
// @everyone first.
func rolesJSONLocked(g *guild) []obj {
	roles := []obj{{"id": g.id, "name": "@everyone", "permissions": itoa64(g.everyone), "position": 0, "color": 0,
		"hoist": false, "managed": false, "mentionable": false, "icon": nil, "unicode_emoji": nil, "flags": 0}}
	for i, r := range g.roles {
		roles = append(roles, obj{"id": r.ID, "name": r.Name, "permissions": itoa64(r.Permissions), "position": i + 1,
			"color": 0, "hoist": false, "managed": false, "mentionable": false, "icon": nil, "unicode_emoji": nil, "flags": 0})
	}
	return roles
}

// myGuilds answers GET /users/@me/guilds: the guilds the bot is in.
func (s *Server) myGuilds(w http.ResponseWriter) {
	s.mu.Lock()
	out := []obj{}
	for _, id := range s.guildOrder {
		g := s.guilds[id]
		out = append(out, obj{"id": g.id, "name": g.name, "icon": nil, "owner": false, "permissions": "0", "features": []string{}})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// guildRoles answers GET /guilds/{id}/roles.
func (s *Server) guildRoles(w http.ResponseWriter, id string) {
	s.mu.Lock()
	g, ok := s.guilds[id]
	var roles []obj
	if ok {
		roles = rolesJSONLocked(g)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, 10004, "Unknown Guild")
		return
	}
	writeJSON(w, http.StatusOK, roles)
}
