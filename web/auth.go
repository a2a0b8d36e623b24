package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cookieName is the session cookie.
const cookieName = "troupe_session"

// sessionTTL is how long a session lasts without use.
const sessionTTL = 12 * time.Hour

// maxSessions bounds the sessions kept; the least recently used go first.
const maxSessions = 1000

// session is one logged-in browser.
type session struct {
	id, csrf string
	// readOnly sessions may look but not change.
	readOnly bool
	seen     time.Time
}

type sessions struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*session
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, m: map[string]*session{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (ss *sessions) open(readOnly bool) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	if len(ss.m) >= maxSessions {
		var oldest *session
		for _, s := range ss.m {
			if oldest == nil || s.seen.Before(oldest.seen) {
				oldest = s
			}
		}
		delete(ss.m, oldest.id)
	}
	s := &session{id: randomHex(32), csrf: randomHex(32), readOnly: readOnly, seen: now}
	ss.m[s.id] = s
	return s
}

func (ss *sessions) get(id string) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return session{}, false
	}
	now := ss.now()
	if now.Sub(s.seen) > sessionTTL {
		delete(ss.m, id)
		return session{}, false
	}
	s.seen = now
	return *s, true
}

func (ss *sessions) close(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, id)
}

// loginLimiter allows each address loginBurst failed logins, refilled one
// every loginRefill: guessing a token by the web form is hopeless.
type loginLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const (
	loginBurst  = 5
	loginRefill = 12 * time.Second
)

func newLoginLimiter(now func() time.Time) *loginLimiter {
	return &loginLimiter{now: now, m: map[string]*bucket{}}
}

// allow reports whether addr may try to log in now.
func (l *loginLimiter) allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(addr)
	return b.tokens >= 1
}

// failed spends one of addr's tries.
func (l *loginLimiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(addr)
	b.tokens--
}

func (l *loginLimiter) refill(addr string) *bucket {
	now := l.now()
	b, ok := l.m[addr]
	if !ok {
		if len(l.m) > 10000 {
			clear(l.m) // an address flood forgets the others' tries, not the limit
		}
		b = &bucket{tokens: loginBurst, at: now}
		l.m[addr] = b
		return b
	}
	b.tokens = min(loginBurst, b.tokens+float64(now.Sub(b.at))/float64(loginRefill))
	b.at = now
	return b
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// session returns the request's session, if it has a live one.
func (s *Server) session(r *http.Request) (session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return session{}, false
	}
	return s.sessions.get(c.Value)
}

// guard lets a request through only with a session; a change also needs a
// session that may change, a POST, and the form's CSRF token.
func (s *Server) guard(change bool, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.session(r)
		if !ok {
			s.refuse(w, r)
			return
		}
		if change {
			if sess.readOnly && r.URL.Path != "/logout" {
				s.fail(w, r, http.StatusForbidden, "This session may only look: log in with the full token to change memory.")
				return
			}
			if r.Method != http.MethodPost {
				s.fail(w, r, http.StatusMethodNotAllowed, "Changes are sent with a form.")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
			if err := r.ParseMultipartForm(maxUpload); err != nil && err != http.ErrNotMultipart {
				if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
					s.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d MB: nothing was changed.", maxUpload>>20))
					return
				}
				s.fail(w, r, http.StatusBadRequest, "The form could not be read: "+err.Error())
				return
			}
			got := r.PostFormValue("csrf")
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) != 1 {
				s.fail(w, r, http.StatusForbidden, "The form's security token is missing or stale: reload the page and try again.")
				return
			}
		}
		h(w, r.WithContext(withSession(r.Context(), sess)))
	})
}

// maxUpload bounds a form, an uploaded card included.
const maxUpload = 32 << 20

// refuse answers a request without a session: a page goes to the login
// form (and back after it), anything else gets 401.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/live/") {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	http.Error(w, "log in first", http.StatusUnauthorized)
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", loginPage{Next: safeNext(r.URL.Query().Get("next"))})
}

type loginPage struct {
	Next, Problem string
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addr := remoteHost(r)
	next := safeNext(r.PostFormValue("next"))
	if !s.logins.allow(addr) {
		w.Header().Set("Retry-After", "60")
		s.render(w, r, http.StatusTooManyRequests, "login", loginPage{Next: next, Problem: "Too many tries: wait a minute."})
		return
	}
	token := r.PostFormValue("token")
	full := s.opt.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opt.Token)) == 1
	ro := s.opt.ReadOnlyToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opt.ReadOnlyToken)) == 1
	if !full && !ro {
		s.logins.failed(addr)
		s.log.Warn("inspector: failed login", "addr", addr)
		s.render(w, r, http.StatusUnauthorized, "login", loginPage{Next: next, Problem: "That is not the token."})
		return
	}
	sess := s.sessions.open(!full)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sess.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https", MaxAge: int(sessionTTL / time.Second)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.sessions.close(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a login's return address on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}
