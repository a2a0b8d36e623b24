package config

import (
	"errors"
	"strings"
	"testing"
)

// The inspector is off by default, listens on the loopback and keeps the
// last 20 prompts of a chat once a token turns it on.
func TestWebDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(writeConfig(t, ""), envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Web.Listen != "127.0.0.1:8080" || c.Web.Prompts != 20 || c.Web.Token != "" || c.Web.ReadOnlyToken != "" {
		t.Errorf("got %#v, want listen 127.0.0.1:8080, prompts 20, no tokens", c.Web)
	}
	if c.Web.On() || c.Web.PromptTraces() != 0 {
		t.Errorf("without a token: On %v, PromptTraces %d; want off and 0", c.Web.On(), c.Web.PromptTraces())
	}
}

// Every web key has its environment override; the tokens are secrets.
func TestWebFromEnv(t *testing.T) {
	t.Parallel()
	c, err := Load(writeConfig(t, "web:\n  prompts: 5\n"), envMap(map[string]string{
		"TROUPE_WEB_TOKEN":           "a-token-of-twenty-chars",
		"TROUPE_WEB_READ_ONLY_TOKEN": "another-token-to-look",
		"TROUPE_WEB_LISTEN":          "0.0.0.0:9999",
		"TROUPE_WEB_PROMPTS":         "7",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Web.Token.Value() != "a-token-of-twenty-chars" || c.Web.ReadOnlyToken.Value() != "another-token-to-look" || c.Web.Listen != "0.0.0.0:9999" || c.Web.Prompts != 7 {
		t.Errorf("got listen %q prompts %d, want the environment's", c.Web.Listen, c.Web.Prompts)
	}
	if !c.Web.On() || c.Web.PromptTraces() != 7 {
		t.Errorf("On %v, PromptTraces %d; want on and 7", c.Web.On(), c.Web.PromptTraces())
	}
	if s := c.Web.Token.String(); strings.Contains(s, "twenty") {
		t.Errorf("the token prints as %q", s)
	}
}

func TestWebValidated(t *testing.T) {
	t.Parallel()
	long, other := Secret("0123456789abcdef"), Secret("fedcba9876543210")
	for _, tt := range []struct {
		name string
		web  Web
		key  string
	}{
		{"negative prompts", Web{Listen: "127.0.0.1:8080", Prompts: -1}, "web.prompts"},
		{"too many prompts", Web{Listen: "127.0.0.1:8080", Prompts: 1001}, "web.prompts"},
		{"listen not host:port", Web{Listen: "localhost", Prompts: 20}, "web.listen"},
		{"listen empty", Web{Listen: "", Prompts: 20}, "web.listen"},
		{"listen bad port", Web{Listen: "127.0.0.1:99999", Prompts: 20}, "web.listen"},
		{"short token", Web{Listen: "127.0.0.1:8080", Token: "short", Prompts: 20}, "web.token"},
		{"short read-only token", Web{Listen: "127.0.0.1:8080", Token: long, ReadOnlyToken: "tiny", Prompts: 20}, "web.read_only_token"},
		{"same tokens", Web{Listen: "127.0.0.1:8080", Token: long, ReadOnlyToken: long, Prompts: 20}, "web.read_only_token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Web = tt.web
			var e *Error
			if err := c.Validate(); !errors.As(err, &e) || e.Key != tt.key {
				t.Errorf("got %v, want a problem with %s", err, tt.key)
			}
		})
	}
	for _, ok := range []Web{
		{Listen: "127.0.0.1:8080", Prompts: 0},
		{Listen: ":8080", Prompts: 1000, Token: long, ReadOnlyToken: other},
		{Listen: "[::1]:8080", Prompts: 20, Token: long},
	} {
		c := Default()
		c.Web = ok
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: got %v, want valid", ok.Listen, err)
		}
	}
}
