package web_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"troupe/models/testenv"
	"troupe/web"
)

const (
	fullToken = "full-token-0123456789abcdef"
	roToken   = "look-token-0123456789abcdef"
)

// inspector starts the inspector over a fresh store of b on a loopback
// HTTP server.
func inspector(t *testing.T, b testenv.Backend, opt web.Options) (*web.Server, *httptest.Server) {
	t.Helper()
	if opt.Store == nil {
		opt.Store = testenv.OpenStore(t, b)
	}
	if opt.Token == "" && opt.ReadOnlyToken == "" {
		opt.Token, opt.ReadOnlyToken = fullToken, roToken
	}
	s, err := web.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // a live page left open in a browser would hold ts.Close
		ts.Close()
	})
	return s, ts
}

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) login(token string) {
	b.t.Helper()
	resp, body := b.post("/login", url.Values{"token": {token}, "next": {"/"}})
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("login: %d\n%s", resp.StatusCode, body)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

// csrf reads the session's CSRF token from a page's form.
func (b *browser) csrf() string {
	b.t.Helper()
	_, body := b.get("/")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF field in the overview:\n%s", body)
	}
	return m[1]
}

// concrete fills a route pattern's wildcards so it can be requested.
func concrete(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.TrimSuffix(path, "{$}")
	path = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
	return method, path
}

// TestEveryRouteRefusesWithoutASession: every registered route, the pages
// still to come included, sends a request without a session to the login
// form (a GET of a page) or answers 401 (a change, a live stream), and
// shows none of its content.
func TestEveryRouteRefusesWithoutASession(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s, ts := inspector(t, b, web.Options{})
			routes := s.Routes()
			if len(routes) < 2 {
				t.Fatalf("only %d routes registered", len(routes))
			}
			anon := newBrowser(t, ts.URL)
			for _, rt := range routes {
				method, path := concrete(rt.Pattern)
				req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("csrf=x"))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := anon.c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				switch {
				case method == http.MethodGet && resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/login?next="):
				case method != http.MethodGet && resp.StatusCode == http.StatusUnauthorized:
				// A live stream is no page: an EventSource cannot follow
				// a redirect to a form.
				case strings.HasPrefix(path, "/live/") && resp.StatusCode == http.StatusUnauthorized:
				default:
					t.Errorf("%s %s without a session: %d (Location %q)", method, path, resp.StatusCode, resp.Header.Get("Location"))
				}
			}
			// An unknown path shows nothing either.
			if resp, _ := anon.get("/no/such/page"); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("unknown path without a session: %d", resp.StatusCode)
			}
		})
	}
}

// TestLoginSessionAndHeaders: the token opens an HttpOnly, SameSite=Strict
// session; a wrong token does not; every answer carries a CSP without
// inline script.
func TestLoginSessionAndHeaders(t *testing.T) {
	b := testenv.Backends(t)[0]
	_, ts := inspector(t, b, web.Options{})
	br := newBrowser(t, ts.URL)
	resp, body := br.post("/login", url.Values{"token": {"wrong-token-wrong-token"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not the token") {
		t.Errorf("wrong token: %d\n%s", resp.StatusCode, body)
	}
	resp, _ = br.post("/login", url.Values{"token": {fullToken}, "next": {"//evil.example/x"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("login: %d to %q, want 303 to / (an off-site next is refused)", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "troupe_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || len(cookie.Value) < 32 {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Strict, random", cookie)
	}
	resp, body = br.get("/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Overview") {
		t.Fatalf("overview after login: %d\n%s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(body) {
		t.Errorf("a page has inline script")
	}
	// Logging out ends the session.
	resp, _ = br.post("/logout", url.Values{"csrf": {br.csrf()}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("logout: %d", resp.StatusCode)
	}
	if resp, _ := br.get("/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("overview after logout: %d, want the login form", resp.StatusCode)
	}
}

// TestChangeNeedsCSRFAndAFullSession: a change without the form's CSRF
// token is refused; a read-only session may look but not change.
func TestChangeNeedsCSRFAndAFullSession(t *testing.T) {
	b := testenv.Backends(t)[0]
	_, ts := inspector(t, b, web.Options{})
	br := newBrowser(t, ts.URL)
	br.login(fullToken)
	for _, form := range []url.Values{{}, {"csrf": {"0000"}}, {"csrf": {strings.Repeat("0", 64)}}} {
		if resp, _ := br.post("/logout", form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("logout with csrf %q: %d, want 403", form.Get("csrf"), resp.StatusCode)
		}
	}
	if resp, _ := br.get("/"); resp.StatusCode != http.StatusOK {
		t.Errorf("the refused logout ended the session: %d", resp.StatusCode)
	}
	ro := newBrowser(t, ts.URL)
	ro.login(roToken)
	resp, body := ro.get("/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "read-only") {
		t.Errorf("read-only overview: %d, badge shown %v", resp.StatusCode, strings.Contains(body, "read-only"))
	}
}

// TestLoginAttemptsAreLimited: after a few wrong tokens from one address,
// even the right one is refused for a while.
func TestLoginAttemptsAreLimited(t *testing.T) {
	b := testenv.Backends(t)[0]
	_, ts := inspector(t, b, web.Options{})
	br := newBrowser(t, ts.URL)
	limited := false
	for range 10 {
		resp, _ := br.post("/login", url.Values{"token": {"guess-guess-guess-guess"}})
		if resp.StatusCode == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("10 wrong tokens in a row were all tried")
	}
	if resp, _ := br.post("/login", url.Values{"token": {fullToken}}); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right token right after: %d, want 429", resp.StatusCode)
	}
}

// TestOffWithoutToken: no token, no inspector.
func TestOffWithoutToken(t *testing.T) {
	b := testenv.Backends(t)[0]
	_, err := web.New(web.Options{Store: testenv.OpenStore(t, b)})
	if !errors.Is(err, web.ErrOff) {
		t.Errorf("New without a token: %v, want ErrOff", err)
	}
}
