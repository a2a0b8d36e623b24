package config

import (
	"errors"
	"testing"
)

// discord.cdn_base_url defaults to Discord's CDN, is set from the file or
// the environment, and must be an http(s) URL ending in / (it is a prefix
// downloads are matched against, so a missing / would let
// https://cdn.example.com.evil/ through).
func TestDiscordCDNBaseURL(t *testing.T) {
	t.Parallel()
	if got := Default().Discord.CDNBaseURL; got != "https://cdn.discordapp.com/" {
		t.Errorf("default discord.cdn_base_url = %q, want https://cdn.discordapp.com/", got)
	}
	const fake = "http://127.0.0.1:5555/cdn/"
	c, err := Load(writeConfig(t, "discord:\n  cdn_base_url: "+fake+"\n"), envMap(nil))
	if err != nil || c.Discord.CDNBaseURL != fake {
		t.Errorf("from the file: got %q, %v", c.Discord.CDNBaseURL, err)
	}
	c, err = Load(writeConfig(t, ""), envMap(map[string]string{"TROUPE_DISCORD_CDN_BASE_URL": fake}))
	if err != nil || c.Discord.CDNBaseURL != fake {
		t.Errorf("from the environment: got %q, %v", c.Discord.CDNBaseURL, err)
	}
	for _, bad := range []string{"", "https://cdn.example.com", "ftp://cdn.example.com/", "cdn.example.com/"} {
		c := Default()
		c.Discord.CDNBaseURL = bad
		var e *Error
		if err := c.Validate(); !errors.As(err, &e) || e.Key != "discord.cdn_base_url" {
			t.Errorf("cdn_base_url %q: got %v, want an error naming discord.cdn_base_url", bad, err)
		}
	}
}
