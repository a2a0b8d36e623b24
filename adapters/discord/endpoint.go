package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// apiVersion is the REST API version used under discord.api_base_url.
const apiVersion = "10"

// rebase is an http.RoundTripper that sends discordgo's REST requests, which
// it builds for https://discord.com/api/v9/…, to base + "api/v10/…". The
// gateway address request asks for /gateway/bot, which bots should use.
// Requests outside the API (CDN images) go out unchanged.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

func newRebase(base string, next http.RoundTripper) (*rebase, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discord: api_base_url %q is not an http(s) URL", base)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &rebase{base: u, next: next}, nil
}

// RoundTrip rewrites the request's URL and sends it.
func (r *rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	rest, ok := apiPath(req.URL.EscapedPath())
	if !ok {
		return r.next.RoundTrip(req)
	}
	if rest == "gateway" {
		rest = "gateway/bot"
	}
	target := r.base.Scheme + "://" + r.base.Host + r.base.EscapedPath() + "api/v" + apiVersion + "/" + rest
	if req.URL.RawQuery != "" {
		target += "?" + req.URL.RawQuery
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("discord: rebase %s: %w", req.URL.Path, err)
	}
	out := req.Clone(req.Context())
	out.URL = u
	out.Host = ""
	return r.next.RoundTrip(out)
}

// apiPath cuts "/api/vN/" from the front of an escaped path.
func apiPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/api/v")
	if !ok {
		return "", false
	}
	_, after, ok := strings.Cut(rest, "/")
	return after, ok
}
