package media

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Fetcher downloads attachments from a platform's own file hosts: Allowed
// lists the URL prefixes (scheme, host and path prefix, such as
// https://cdn.discordapp.com/) a download may start from. Anything else —
// a link a message points at, a redirect off the hosts — is ErrNotAllowed.
type Fetcher struct {
	Client  *http.Client
	Allowed []string
}

// Source is the download of rawURL through f, refused unless the URL is on
// one of f's hosts.
func (f Fetcher) Source(rawURL string) Source { return urlSource{f: f, url: rawURL} }

// allowed reports whether u starts with one of f's prefixes.
func (f Fetcher) allowed(u *url.URL) bool {
	for _, a := range f.Allowed {
		p, err := url.Parse(a)
		if err != nil || p.Host == "" {
			continue
		}
		if u.Scheme == p.Scheme && u.Host == p.Host && strings.HasPrefix(u.EscapedPath(), p.EscapedPath()) {
			return true
		}
	}
	return false
}

type urlSource struct {
	f   Fetcher
	url string
}

func (s urlSource) Download(ctx context.Context, limit int64) ([]byte, error) {
	u, err := url.Parse(s.url)
	if err != nil || !s.f.allowed(u) {
		return nil, ErrNotAllowed
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, ErrNotAllowed
	}
	c := http.DefaultClient
	if s.f.Client != nil {
		c = s.f.Client
	}
	resp, err := c.Do(req)
	if err != nil {
		// The URL may hold a token (Telegram's file URLs do): the error
		// names the host only.
		return nil, fmt.Errorf("media: download from %s failed", u.Host)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("media: download from %s: HTTP %d", u.Host, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("media: download from %s cut off", u.Host)
	}
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	return data, nil
}
