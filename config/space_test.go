package config

import (
	"errors"
	"strings"
	"testing"
)

// discord.space takes audience (the default), guild and channel, from the
// file or the environment; anything else is refused naming the key, the
// value and the choices.
func TestDiscordSpaceSetting(t *testing.T) {
	t.Parallel()
	if got := Default().Discord.Space; got != SpaceAudience {
		t.Errorf("default discord.space = %q, want %q", got, SpaceAudience)
	}
	for _, v := range []string{SpaceAudience, SpaceGuild, SpaceChannel} {
		c, err := Load(writeConfig(t, "discord:\n  space: "+v+"\n"), envMap(nil))
		if err != nil || c.Discord.Space != v {
			t.Errorf("space %s from the file: got %q, %v", v, c.Discord.Space, err)
		}
		c, err = Load(writeConfig(t, ""), envMap(map[string]string{"TROUPE_DISCORD_SPACE": v}))
		if err != nil || c.Discord.Space != v {
			t.Errorf("space %s from the environment: got %q, %v", v, c.Discord.Space, err)
		}
	}
	for _, bad := range []string{"guilds", "", "Audience"} {
		c := Default()
		c.Discord.Space = bad
		var e *Error
		err := c.Validate()
		if !errors.As(err, &e) || e.Key != "discord.space" {
			t.Errorf("space %q: got %v, want an error naming discord.space", bad, err)
			continue
		}
		for _, want := range []string{`"` + bad + `"`, "audience", "guild", "channel"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("space %q: message %q does not mention %s", bad, err, want)
			}
		}
	}
}
