package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"troupe/cards"
	"troupe/memory"
	"troupe/models"
)

// Queue is the part of the job queue the inspector needs: after an edit or
// a forget, the card's memory in the space is consolidated again.
type Queue interface {
	Consolidate(ctx context.Context, cardID, spaceID string) error
}

// Options configure a Server. Store is required; the rest may be nil.
type Options struct {
	Store  *models.Store
	Memory *memory.Service
	Queue  Queue
	// Cards is the library the Cards page lists and uploads go to; nil
	// shows no library.
	Cards *cards.Library
	// CardsDir is the folder uploads are written to ("" refuses uploads).
	CardsDir string
	// WorldsDir is cards.worlds_dir: where uploaded world files go ("" is
	// worlds/ inside or beside CardsDir, as troupe card import puts them).
	WorldsDir string
	// Token opens sessions that may change memory; ReadOnlyToken ones
	// that may only look. The inspector is off when both are empty.
	Token, ReadOnlyToken string
	Log                  *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// LivePoll is how often a live page looks for new turns (1 s when 0).
	LivePoll time.Duration
}

// Server is the inspector's HTTP handler and its sessions.
type Server struct {
	opt      Options
	log      *slog.Logger
	mux      *http.ServeMux
	sessions *sessions
	logins   *loginLimiter
	pages    *pages
	cards    cardState

	mu     sync.Mutex
	routes []Route

	// stop ends the live streams (Close): a shutdown waits for the
	// requests in flight, and a stream would never finish by itself.
	stop     chan struct{}
	stopOnce sync.Once
}

// Close ends the live streams; the pages already served are unaffected.
// Serve calls it when its context ends.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
}

// Route is one registered pattern, for the tests that hold every route to
// the access rules.
type Route struct {
	Pattern string
	// Change is true for a route that changes something: it needs a
	// session that may change, and the CSRF token.
	Change bool
}

// ErrOff is New's error when no token is configured.
var ErrOff = errors.New("web: the inspector is off: set web.token (or TROUPE_WEB_TOKEN)")

// New builds the inspector. It returns ErrOff when no token is set.
func New(opt Options) (*Server, error) {
	if opt.Token == "" && opt.ReadOnlyToken == "" {
		return nil, ErrOff
	}
	if opt.Store == nil {
		return nil, errors.New("web: a store is required")
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.LivePoll <= 0 {
		opt.LivePoll = time.Second
	}
	pg, err := loadPages()
	if err != nil {
		return nil, err
	}
	s := &Server{stop: make(chan struct{}), opt: opt, log: opt.Log, mux: http.NewServeMux(), sessions: newSessions(opt.Now), logins: newLoginLimiter(opt.Now), pages: pg}
	s.register()
	return s, nil
}

// register adds every route: the open ones (login, static files), then
// each page's own (their files register them).
func (s *Server) register() {
	s.mux.HandleFunc("GET /login", s.loginForm)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.Handle("GET /static/", staticFiles())
	s.handle("POST /logout", true, s.logout)
	s.handle("GET /{$}", false, s.overview)
	s.chatRoutes()
	s.memoryRoutes()
	s.cardRoutes()
	s.searchRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.session(r); !ok {
			s.refuse(w, r)
			return
		}
		s.notFound(w, r)
	})
}

// handle registers a page that needs a session; change says it changes
// something (then it also needs a session that may change and the form's
// CSRF token).
func (s *Server) handle(pattern string, change bool, h http.HandlerFunc) {
	s.mu.Lock()
	s.routes = append(s.routes, Route{Pattern: pattern, Change: change})
	s.mu.Unlock()
	s.mux.Handle(pattern, s.guard(change, h))
}

// Routes lists the patterns that need a session, for tests.
func (s *Server) Routes() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Route(nil), s.routes...)
}

// ServeHTTP serves the inspector with its security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

// contentPolicy allows the inspector's own files only: no inline script or
// style, no frames, forms only to itself.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Run serves on addr until ctx ends.
func (s *Server) Run(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	s.log.Info("inspector listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
		s.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
