package discord

import (
	"context"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// isSnowflake reports whether s is a Discord id: digits only.
func isSnowflake(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// adminRoleIDs are the ids written in discord.admin_roles; names are left
// for resolveAdminRoles.
func adminRoleIDs(entries []string) (ids map[string]bool, names []string) {
	ids = map[string]bool{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case isSnowflake(e):
			ids[e] = true
		case e != "":
			names = append(names, e)
		}
	}
	return ids, names
}

// resolveAdminRoles turns the role names of discord.admin_roles into ids,
// once, at start: the roles of discord.allowed_guilds (else of every guild
// the bot is in) are read over REST. Roles are matched by id from then on,
// as a name can be taken by another role; each name resolved is logged
// with a warning saying so, and a name no role has is logged too.
func (a *Adapter) resolveAdminRoles(ctx context.Context, s *discordgo.Session) {
	ids, names := adminRoleIDs(a.cfg.AdminRoles)
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var guilds []string
	for _, g := range a.cfg.AllowedGuilds {
		if g = strings.TrimSpace(g); g != "" {
			guilds = append(guilds, g)
		}
	}
	if len(guilds) == 0 {
		// One page: 200 guilds; a bot in more should write role ids.
		gs, err := s.UserGuilds(200, "", "", false, discordgo.WithContext(ctx))
		if err != nil {
			a.log.Warn("discord.admin_roles: cannot list the bot's guilds to resolve role names; write role ids", "err", restProblem(err))
		}
		for _, g := range gs {
			guilds = append(guilds, g.ID)
		}
	}
	found := map[string]bool{}
	for _, g := range guilds {
		roles, err := s.GuildRoles(g, discordgo.WithContext(ctx))
		if err != nil {
			a.log.Warn("discord.admin_roles: cannot read a guild's roles to resolve role names", "guild", g, "err", restProblem(err))
			continue
		}
		for _, r := range roles {
			for _, n := range names {
				if strings.EqualFold(r.Name, n) {
					ids[r.ID] = true
					found[n] = true
					a.log.Warn("discord.admin_roles: a role name was resolved to its id at start; names can change, write the id instead",
						"name", n, "guild", g, "role_id", r.ID)
				}
			}
		}
	}
	for _, n := range names {
		if !found[n] {
			a.log.Warn("discord.admin_roles: no role of the bot's guilds has this name; write the role id", "name", n)
		}
	}
	a.mu.Lock()
	a.adminRoles = ids
	a.mu.Unlock()
}

// isAdminRole reports whether the role id is in discord.admin_roles (by id,
// or by a name resolved at start).
func (a *Adapter) isAdminRole(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.adminRoles[id]
}
