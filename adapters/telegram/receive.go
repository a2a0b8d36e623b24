package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// poll receives by long polling until ctx is done. It first re-dispatches
// the updates a previous run took but did not finish, then asks for the
// saved offset; see inbox.
func (a *Adapter) poll(ctx context.Context) error {
	if _, err := a.do(ctx, "deleteWebhook", tgbotapi.DeleteWebhookConfig{}, true); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		a.log.Warn("delete webhook", "err", err)
	}
	st, err := a.inbox.load(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if len(st.Pending) > 0 {
		a.log.Info("resuming updates left pending", "count", len(st.Pending))
	}
	for _, u := range st.Pending {
		a.seen.add(u.UpdateID)
		if ev, why := a.rt.route(u); why == "" {
			a.dispatch(ev)
		} else {
			a.finish(event{update: u})
		}
	}
	next := st.Next
	backoff := time.Second
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Duration(a.pollTimeout)*time.Second+callTimeout)
		ups, err := a.bot(pctx).GetUpdates(tgbotapi.UpdateConfig{Offset: next, Timeout: a.pollTimeout, AllowedUpdates: allowedUpdates})
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			err = apiError("getUpdates", a.cfg.Token.Value(), err)
			d, limited := retryAfter(err)
			if !limited {
				d, backoff = backoff, min(2*backoff, 30*time.Second)
			}
			a.log.Warn("get updates", "err", err, "retry_in", d)
			if sleep(ctx, d) != nil {
				break
			}
			continue
		}
		backoff = time.Second
		newNext := next
		var keep []tgbotapi.Update
		var evs []event
		for _, u := range ups {
			newNext = max(newNext, u.UpdateID+1)
			if u.UpdateID < next || a.seen.has(u.UpdateID) {
				continue
			}
			ev, why := a.rt.route(u)
			if why != "" {
				a.log.Debug("update ignored", "update_id", u.UpdateID, "reason", why)
				continue
			}
			keep = append(keep, u)
			evs = append(evs, ev)
		}
		if newNext == next {
			continue
		}
		// Save before the next poll confirms these updates to Telegram.
		if err := a.inbox.accept(ctx, keep, newNext); err != nil {
			a.log.Error("save update offset; asking again", "err", err)
			if sleep(ctx, backoff) != nil {
				break
			}
			continue
		}
		next = newNext
		for _, ev := range evs {
			a.seen.add(ev.update.UpdateID)
			a.dispatch(ev)
		}
	}
	return nil
}

// serveWebhook sets the webhook and serves it on webhook_listen until ctx
// is done. The webhook stays set on the way out: other replicas may still
// serve it.
func (a *Adapter) serveWebhook(ctx context.Context) error {
	if err := a.setWebhook(ctx, a.hook, a.cfg.WebhookSecret.Value()); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("telegram: set webhook: %w", err)
	}
	ln, err := net.Listen("tcp", a.cfg.WebhookListen)
	if err != nil {
		return fmt.Errorf("telegram: webhook listen: %w", err)
	}
	a.log.Info("webhook listening", "addr", ln.Addr().String())
	srv := a.webhookServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("telegram: webhook server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn("webhook server shutdown", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.log.Warn("webhook server", "err", err)
	}
	return nil
}

// hookLimits bound what one connection to the webhook server may take.
type hookLimits struct {
	readHeader, read, write, idle time.Duration
}

// defaultHookLimits: Telegram posts one small update per request and reads
// the answer at once; a client that sends or reads slower is not Telegram.
// Writing covers the wait for the update to be stored (webhookStoreWait).
var defaultHookLimits = hookLimits{
	readHeader: 10 * time.Second,
	read:       30 * time.Second,
	write:      webhookStoreWait + 30*time.Second,
	idle:       2 * time.Minute,
}

// webhookServer is the server of WebhookHandler, with a.hookLimits.
func (a *Adapter) webhookServer() *http.Server {
	l := a.hookLimits
	return &http.Server{
		Handler:           a.WebhookHandler(),
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelDebug),
	}
}

// webhookStoreWait bounds how long a webhook request waits for its message
// to be stored before it is acknowledged anyway (it is queued by then).
const webhookStoreWait = 20 * time.Second

// dispatchStored dispatches ev and, for a message, waits until the
// pipeline has stored it: Telegram forgets an update once its webhook
// request is acknowledged, so a process killed right after must not hold it
// only in memory.
func (a *Adapter) dispatchStored(ctx context.Context, ev event) {
	rcs := a.dispatch(ev)
	if rcs == nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, webhookStoreWait)
	defer cancel()
	var err error
	select {
	case rc, ok := <-rcs:
		if !ok {
			err = errors.New("left pending at shutdown")
		} else {
			err = rc.Admitted(wctx)
		}
	case <-wctx.Done():
		err = wctx.Err()
	}
	if err != nil {
		a.log.Warn("webhook update not stored before its answer", "update_id", ev.update.UpdateID, "err", err)
	}
}

// maxWebhookBody bounds one update posted to the webhook.
const maxWebhookBody = 1 << 20

// WebhookHandler is the webhook endpoint. Every request must carry the
// configured secret in X-Telegram-Bot-Api-Secret-Token (else 403); an update
// seen before is acknowledged and not handled again; an update is
// acknowledged once it is queued for its chat, so Telegram does not wait
// for the reply. Before Run has connected it answers 503.
func (a *Adapter) WebhookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := a.cfg.WebhookSecret.Value()
		got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			// Anyone can post: the warning comes once a minute at most.
			if ok, held := a.unauth.take(a.now()); ok {
				a.log.Warn("webhook request without the secret", "remote", r.RemoteAddr, "suppressed", held)
			}
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !a.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		var u tgbotapi.Update
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxWebhookBody)).Decode(&u); err != nil {
			http.Error(w, "bad update", http.StatusBadRequest)
			return
		}
		if a.seen.add(u.UpdateID) {
			if ev, why := a.rt.route(u); why == "" {
				a.dispatchStored(r.Context(), ev)
			} else {
				a.log.Debug("update ignored", "update_id", u.UpdateID, "reason", why)
			}
		}
		w.WriteHeader(http.StatusOK)
	})
}
