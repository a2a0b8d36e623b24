package telegram

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"troupe/config"
)

// webhookHarness is a harness in webhook mode.
func webhookHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.cfg.WebhookURL = "https://bot.example/tg/hook"
	h.cfg.WebhookSecret = config.Secret("s3cret-token")
	h.cfg.WebhookListen = "127.0.0.1:0"
	return h
}

var listeningAt = regexp.MustCompile(`msg="webhook listening" .*addr=(\S+)`)

// A connection that sends too slowly, or idles, is closed by the webhook
// server; the limits it runs with by default are all set.
func TestWebhookServerTimeouts(t *testing.T) {
	t.Parallel()
	for name, d := range map[string]time.Duration{
		"read header": defaultHookLimits.readHeader, "read": defaultHookLimits.read,
		"write": defaultHookLimits.write, "idle": defaultHookLimits.idle,
	} {
		if d <= 0 || d > 5*time.Minute {
			t.Errorf("default %s timeout: %v", name, d)
		}
	}
	if defaultHookLimits.write <= webhookStoreWait {
		t.Errorf("write timeout %v does not cover the wait for the update to be stored (%v)", defaultHookLimits.write, webhookStoreWait)
	}
	h := webhookHarness(t)
	h.tune = func(a *Adapter) {
		a.hookLimits = hookLimits{readHeader: 300 * time.Millisecond, read: 500 * time.Millisecond, write: 2 * time.Second, idle: 500 * time.Millisecond}
	}
	h.start()
	var addr string
	waitFor(t, "the webhook server listening", func() bool {
		m := listeningAt.FindStringSubmatch(h.logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	// closedWithin reports whether the server closes conn within d,
	// reading (and discarding) what it answers before.
	closedWithin := func(conn net.Conn, d time.Duration) error {
		_ = conn.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return err
		}
		return nil
	}
	t.Run("slow body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// The headers promise 100 bytes; one comes.
		if _, err := io.WriteString(conn, "POST /tg/hook HTTP/1.1\r\nHost: bot.example\r\nContent-Type: application/json\r\n"+
			"X-Telegram-Bot-Api-Secret-Token: s3cret-token\r\nContent-Length: 100\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
		if err := closedWithin(conn, 4*time.Second); err != nil {
			t.Errorf("a request whose body never came kept its connection: %v", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /tg/hook HTTP/1.1\r\nHost: bot.example\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(4 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Close {
			t.Fatalf("a request without the secret: got %d (close %v), want 403 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		if err := closedWithin(conn, 4*time.Second); err != nil {
			t.Errorf("an idle connection stayed open: %v", err)
		}
	})
}

// A burst of requests without the secret makes one warning; the next one,
// a minute on, tells how many were held back.
func TestUnauthenticatedWebhookWarningsRateLimited(t *testing.T) {
	t.Parallel()
	h := webhookHarness(t)
	clk := newTestClock()
	h.tune = func(a *Adapter) { a.now = clk.now }
	h.start()
	srv := httptest.NewServer(h.a.WebhookHandler())
	t.Cleanup(srv.Close)
	post := func(secret string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tg/hook", bytes.NewReader([]byte(`{"update_id":1}`)))
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("without the secret: got %d, want 403", resp.StatusCode)
		}
	}
	warnings := func() []string {
		var out []string
		for _, l := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "without the secret") {
				out = append(out, l)
			}
		}
		return out
	}
	for i := range 30 {
		if i%2 == 0 {
			post("")
		} else {
			post("wrong")
		}
	}
	if got := warnings(); len(got) != 1 {
		t.Fatalf("warnings for a burst of 30: got %d, want 1: %q", len(got), got)
	}
	clk.add(time.Minute)
	post("")
	got := warnings()
	if len(got) != 2 || !strings.Contains(got[1], "suppressed=29") {
		t.Errorf("a minute later: got %q, want a second warning with suppressed=29", got)
	}
}
