package media

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// secret stands for the bot token Telegram puts in its file URLs.
const secret = "bot123456:SECRET-token"

// fileServer serves body at /file/<secret>/photo.jpg and the redirects the
// tests need.
func fileServer(t *testing.T, body []byte, other *httptest.Server) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/file/"+secret+"/photo.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	})
	mux.HandleFunc("/file/"+secret+"/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/file/"+secret+"/photo.jpg", http.StatusFound)
	})
	mux.HandleFunc("/file/"+secret+"/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/file/"+secret+"/loop", http.StatusFound)
	})
	mux.HandleFunc("/file/"+secret+"/outside", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere/photo.jpg", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere/photo.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	})
	mux.HandleFunc("/file/"+secret+"/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/file/"+secret+"/photo.jpg", http.StatusFound)
	})
	mux.HandleFunc("/file/"+secret+"/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.Write(make([]byte, 1000000))
	})
	mux.HandleFunc("/file/"+secret+"/chunked", func(w http.ResponseWriter, r *http.Request) {
		// Flushing before the body is done makes the server send it
		// chunked, with no Content-Length for the client to refuse.
		for range 100 {
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/file/"+secret+"/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetcherDownload(t *testing.T) {
	t.Parallel()
	body := []byte("picture bytes")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	t.Cleanup(other.Close)
	srv := fileServer(t, body, other)
	f := Fetcher{Allowed: []string{srv.URL + "/file/" + secret + "/"}}
	httpsURL := "https" + strings.TrimPrefix(srv.URL, "http")

	tests := []struct {
		name    string
		url     string
		limit   int64
		want    []byte
		wantErr error
	}{
		{"allowed host", srv.URL + "/file/" + secret + "/photo.jpg", 1000, body, nil},
		{"redirect within the prefix", srv.URL + "/file/" + secret + "/hop", 1000, body, nil},
		{"other host", other.URL + "/file/" + secret + "/photo.jpg", 1000, nil, ErrNotAllowed},
		{"other scheme", httpsURL + "/file/" + secret + "/photo.jpg", 1000, nil, ErrNotAllowed},
		{"path outside the prefix", srv.URL + "/elsewhere/photo.jpg", 1000, nil, ErrNotAllowed},
		{"dot segments out of the prefix", srv.URL + "/file/" + secret + "/../../elsewhere/photo.jpg", 1000, nil, ErrNotAllowed},
		{"user info", "http://user@" + strings.TrimPrefix(srv.URL, "http://") + "/file/" + secret + "/photo.jpg", 1000, nil, ErrNotAllowed},
		{"redirect off the host", srv.URL + "/file/" + secret + "/away", 1000, nil, ErrNotAllowed},
		{"redirect outside the prefix", srv.URL + "/file/" + secret + "/outside", 1000, nil, ErrNotAllowed},
		{"not a URL", "http://[::1", 1000, nil, ErrNotAllowed},
		{"over the limit by Content-Length", srv.URL + "/file/" + secret + "/big", 1000, nil, ErrTooLarge},
		{"over the limit chunked", srv.URL + "/file/" + secret + "/chunked", 50000, nil, ErrTooLarge},
		{"exactly the limit", srv.URL + "/file/" + secret + "/photo.jpg", int64(len(body)), body, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.Source(tt.url).Download(context.Background(), tt.limit)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Download(%s) = %d bytes, %v; want %v", tt.name, len(got), err, tt.wantErr)
				}
			} else if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("Download(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q names the secret path segment", err)
			}
		})
	}
}

// Every error a download can end in names the host only: neither the
// token in the path nor the query reaches the text.
func TestFetcherErrorsHideThePath(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	srv := fileServer(t, []byte("x"), other)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	f := Fetcher{Allowed: []string{srv.URL + "/file/" + secret + "/", closedURL + "/file/" + secret + "/"}}
	for _, u := range []string{
		srv.URL + "/file/" + secret + "/missing?key=SECRET",
		srv.URL + "/file/" + secret + "/loop",
		srv.URL + "/file/" + secret + "/away",
		closedURL + "/file/" + secret + "/photo.jpg?key=SECRET",
		other.URL + "/file/" + secret + "/photo.jpg",
	} {
		_, err := f.Source(u).Download(context.Background(), 100)
		if err == nil {
			t.Fatalf("Download(%s) succeeded, want an error", u)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "/file/") {
			t.Errorf("error %q shows the URL's path or query", err)
		}
		if !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("error %q does not name the host", err)
		}
	}
}

func TestFetcherRedirectLimit(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/f/", func(w http.ResponseWriter, r *http.Request) {
		n := len(r.URL.Path) - len("/f/")
		if n < 4 {
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := Fetcher{Allowed: []string{srv.URL + "/f/"}}
	// Three redirects (/f/ -> x -> xx -> xxx) are followed; a fourth is not.
	if got, err := f.Source(srv.URL+"/f/x").Download(context.Background(), 10); err != nil || string(got) != "ok" {
		t.Fatalf("three redirects: got %q, %v; want ok", got, err)
	}
	if _, err := f.Source(srv.URL+"/f/").Download(context.Background(), 10); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("four redirects: got %v, want a too-many-redirects error", err)
	}
}

func TestFetcherKeepsClientSettings(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Via") != "transport" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: headerTransport{}}
	f := Fetcher{Client: c, Allowed: []string{srv.URL + "/"}}
	got, err := f.Source(srv.URL+"/a").Download(context.Background(), 10)
	if err != nil || string(got) != "ok" {
		t.Fatalf("got %q, %v; want ok through the client's transport", got, err)
	}
	if c.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}

type headerTransport struct{}

func (headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Via", "transport")
	return http.DefaultTransport.RoundTrip(r)
}

func TestFetcherContextEnds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Fetcher{Allowed: []string{srv.URL + "/"}}.Source(srv.URL+"/a?t=SECRET").Download(ctx, 10)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("got %v, want context.Canceled without the query", err)
	}
}

func TestFetcherPrefixBoundary(t *testing.T) {
	t.Parallel()
	f := Fetcher{Allowed: []string{"https://api.example/file/bot1", "::bad", "https://CDN.example/"}}
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"https://api.example/file/bot1/a.jpg", true},
		{"https://api.example/file/bot12/a.jpg", false},
		{"https://cdn.example/a.png", true},
		{"https://cdn.example./a.png", false},
		{"https://cdn.example/a/%2e%2e/b.png", false},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.allowed(u); got != tt.want {
			t.Errorf("allowed(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}
