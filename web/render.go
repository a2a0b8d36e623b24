package web

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"troupe/text"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFS embed.FS

func staticFiles() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}

// funcs are the helpers every template may use. A page's file adds its
// own in an init function.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"short": func(id string) string {
		if len(id) > 10 {
			return id[:10] + "…"
		}
		return id
	},
	"clip": func(s string, n int) string {
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		return text.CutRunes(s, n) + "…"
	},
	"lines":      func(s string) []string { return strings.Split(s, "\n") },
	"pathEscape": url.PathEscape,
}

// pages holds each page's template: the layout with the page's file.
type pages struct {
	byName map[string]*template.Template
}

func loadPages() (*pages, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", base, err)
		}
		p.byName[strings.TrimSuffix(base, ".html")] = t
	}
	return p, nil
}

// view is what the layout gets: the page's data under Data.
type view struct {
	Title    string
	CSRF     string
	LoggedIn bool
	ReadOnly bool
	Path     string
	Data     any
}

type sessionKey struct{}

func withSession(ctx context.Context, s session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionOf(ctx context.Context) (session, bool) {
	s, ok := ctx.Value(sessionKey{}).(session)
	return s, ok
}

// titled lets a page's data name the page.
type titled interface{ PageTitle() string }

// render writes page name with data; a template error is a 500 with
// nothing half-written.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	t, ok := s.pages.byName[name]
	if !ok {
		s.log.Error("inspector: no such page template", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	v := view{Title: name, Path: r.URL.Path, Data: data}
	if tt, ok := data.(titled); ok {
		v.Title = tt.PageTitle()
	}
	if sess, ok := sessionOf(r.Context()); ok {
		v.LoggedIn, v.CSRF, v.ReadOnly = true, sess.csrf, sess.readOnly
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		s.log.Error("inspector: render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// problemPage is the error page's data.
type problemPage struct {
	Status  int
	Message string
}

func (p problemPage) PageTitle() string { return http.StatusText(p.Status) }

// fail shows an error page with a message for people.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "problem", problemPage{Status: status, Message: msg})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, "Nothing here: it may have been forgotten.")
}

// internal logs err and shows a 500 that names nothing of it.
func (s *Server) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.Error("inspector: "+what, "path", r.URL.Path, "err", err)
	s.fail(w, r, http.StatusInternalServerError, "Something went wrong reading "+what+"; the log says what.")
}
