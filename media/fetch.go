package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultFetchTimeout bounds a whole download (redirects and body
// included) when a Fetcher has no Client of its own.
const DefaultFetchTimeout = 60 * time.Second

// maxRedirects is how many redirects a download follows, each of them
// only within the allowed prefixes.
const maxRedirects = 3

// Fetcher downloads attachments from a platform's own file hosts: Allowed
// lists the URL prefixes (scheme, host and path prefix, such as
// https://cdn.discordapp.com/) a download may start from and any redirect
// may lead to (at most 3 of them). Anything else — a link a message points
// at, a redirect off the hosts — is ErrNotAllowed. Client is the HTTP
// client to use (nil: one with DefaultFetchTimeout); its own CheckRedirect
// is replaced by the prefix check.
//
// Errors name the host only, never the URL's path or query: Telegram's
// file URLs carry the bot token in their path.
type Fetcher struct {
	Client  *http.Client
	Allowed []string
}

// Source is the download of rawURL through f, refused unless the URL is on
// one of f's hosts.
func (f Fetcher) Source(rawURL string) Source { return urlSource{f: f, url: rawURL} }

// allowed reports whether u starts with one of f's prefixes. A path with a
// "." or ".." segment is never allowed, so a server that cleans paths
// cannot be walked out of the prefix.
func (f Fetcher) allowed(u *url.URL) bool {
	if u.User != nil || u.Opaque != "" || hasDotSegment(u.Path) {
		return false
	}
	for _, a := range f.Allowed {
		p, err := url.Parse(a)
		if err != nil || p.Host == "" {
			continue
		}
		if u.Scheme != p.Scheme || !strings.EqualFold(u.Host, p.Host) {
			continue
		}
		prefix, path := p.EscapedPath(), u.EscapedPath()
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		// A prefix without a trailing slash ends at a segment boundary:
		// /file/bot1 does not allow /file/bot12/x.
		if rest := path[len(prefix):]; strings.HasSuffix(prefix, "/") || rest == "" || rest[0] == '/' {
			return true
		}
	}
	return false
}

func hasDotSegment(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// client is f's client with redirects checked against f's prefixes.
func (f Fetcher) client() *http.Client {
	c := http.Client{Timeout: DefaultFetchTimeout}
	if f.Client != nil {
		c = *f.Client
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return errTooManyRedirects
		}
		if !f.allowed(req.URL) {
			return errRedirectOff
		}
		return nil
	}
	return &c
}

var (
	errTooManyRedirects = errors.New("too many redirects")
	errRedirectOff      = errors.New("redirect off the allowed hosts")
)

type urlSource struct {
	f   Fetcher
	url string
}

// Download fetches at most limit bytes: ErrNotAllowed for a URL or a
// redirect off f's prefixes, ErrTooLarge past limit (refused before reading
// when the server announces the length), otherwise an error naming the host
// and what failed (wrapping the context's error when it ended).
func (s urlSource) Download(ctx context.Context, limit int64) ([]byte, error) {
	u, err := url.Parse(s.url)
	if err != nil {
		return nil, fmt.Errorf("%w: not a URL", ErrNotAllowed)
	}
	if !s.f.allowed(u) {
		return nil, fmt.Errorf("%w: %s", ErrNotAllowed, hostOf(u))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotAllowed, hostOf(u))
	}
	resp, err := s.f.client().Do(req)
	if err != nil {
		return nil, downloadError(ctx, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("media: download from %s: HTTP %d", hostOf(u), resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %s announces %d bytes, the limit is %d", ErrTooLarge, hostOf(u), resp.ContentLength, limit)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, downloadError(ctx, u, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, hostOf(u), limit)
	}
	return data, nil
}

// downloadError says what failed without the URL: *url.Error carries the
// whole URL in its text, so only causes known to be URL-free are kept.
func downloadError(ctx context.Context, u *url.URL, err error) error {
	host := hostOf(u)
	switch {
	case errors.Is(err, errRedirectOff):
		return fmt.Errorf("%w: %s redirected off the allowed hosts", ErrNotAllowed, host)
	case errors.Is(err, errTooManyRedirects):
		return fmt.Errorf("media: download from %s: more than %d redirects", host, maxRedirects)
	case ctx.Err() != nil:
		return fmt.Errorf("media: download from %s: %w", host, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("media: download from %s: timed out", host)
	}
	return fmt.Errorf("media: download from %s failed", host)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// hostOf is the part of u an error may name.
func hostOf(u *url.URL) string {
	if u.Host == "" {
		return "(no host)"
	}
	return u.Host
}
