// Package telegram is the Telegram adapter. It receives updates by long
// polling (the offset and the updates in hand are saved in the database, so a
// restart neither replays nor skips) or by a webhook checked against its
// secret token; turns private chats, and group messages addressed to the bot
// when groups are allowed, into inbound messages for the shared pipeline, one
// chat's in order and different chats' at once; offers the commands with
// inline keyboards (choosing a card, confirming /forget); and renders
// replies: the typing action, streaming edits at most once a second, HTML
// escaped text with a plain-text fallback, splitting at Telegram's 4096
// characters, and flood control (429) waited out. In a scene each reply
// starts with its speaker's name in bold, and a reply to a message so named
// addresses that character; /memory and a /whisper's answer asked in a
// group go to the asker's private chat. Photos, image and text documents,
// voice notes and audio reach the pipeline as media items whose bytes come
// through getFile from the bot's file endpoint alone; the files the
// pipeline sends go out with sendVoice, sendAudio and sendPhoto.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
	"troupe/config"
	"troupe/keyed"
)

// allowedUpdates are the update kinds the adapter asks Telegram for.
var allowedUpdates = []string{"message", "callback_query"}

// Adapter connects one Telegram bot to the pipeline.
type Adapter struct {
	// MaxImageBytes is media.max_image_bytes: of a photo's sizes the
	// adapter hands the pipeline the largest within it. Set it before
	// Run; 0 means 8 MB.
	MaxImageBytes int64

	cfg   config.Telegram
	p     bot.Engine
	log   *slog.Logger
	httpc *http.Client
	hook  *url.URL
	// fileRoot is the prefix of the bot's download URLs (it holds the
	// token); "" when telegram.api_endpoint has no file endpoint.
	fileRoot string

	// Pacing and patience; tests shorten some of them.
	now          func() time.Time
	editInterval time.Duration
	typingEvery  time.Duration
	typingMax    time.Duration
	pollTimeout  int // seconds
	drainTimeout time.Duration
	maxWaits     int
	hookLimits   hookLimits
	// unauth paces the warning about webhook requests without the secret.
	unauth sparse

	seen *seenSet
	// order keeps each chat's updates in order off the receiving
	// goroutine; perms remembers who may manage a group.
	order keyed.Runner[int64]
	perms permCache
	// swiped is each chat's reply with the swipe keyboard.
	swiped swipedReplies

	running atomic.Bool
	// ready is set once Run has connected; the fields below are written
	// before it and only read after.
	ready atomic.Bool
	api   *tgbotapi.BotAPI
	rt    router
	work  context.Context
	inbox *inbox

	wg sync.WaitGroup
}

// New returns an adapter for the bot cfg names, on engine p, which also
// keeps its update offset. It does no I/O; errors come back for a missing
// token or engine, and for a bad endpoint or webhook setting.
func New(cfg config.Telegram, p bot.Engine, log *slog.Logger) (*Adapter, error) {
	if cfg.Token.Value() == "" {
		return nil, errors.New("telegram: no bot token")
	}
	if p == nil {
		return nil, errors.New("telegram: an engine is required")
	}
	if cfg.APIEndpoint != "" && strings.Count(cfg.APIEndpoint, "%s") != 2 {
		return nil, errors.New("telegram: api_endpoint must contain two %s, like http://127.0.0.1:8081/bot%s/%s")
	}
	var hook *url.URL
	if cfg.WebhookURL != "" {
		u, err := url.Parse(cfg.WebhookURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("telegram: webhook_url %q is not an https URL (Telegram posts updates over https only)", cfg.WebhookURL)
		}
		if cfg.WebhookSecret.Value() == "" {
			return nil, errors.New("telegram: webhook_secret must be set with webhook_url")
		}
		if cfg.WebhookListen == "" {
			return nil, errors.New("telegram: webhook_listen must be set with webhook_url")
		}
		hook = u
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{
		cfg: cfg, p: p, hook: hook,
		log:          log.With("component", "telegram"),
		httpc:        &http.Client{},
		now:          time.Now,
		editInterval: time.Second,
		typingEvery:  4 * time.Second,
		typingMax:    3 * time.Minute,
		pollTimeout:  25,
		drainTimeout: 20 * time.Second,
		maxWaits:     5,
		hookLimits:   defaultHookLimits,
		unauth:       sparse{every: time.Minute},
		seen:         newSeenSet(10000),
	}
	a.fileRoot, _ = fileRoot(cfg.APIEndpoint, cfg.Token.Value())
	return a, nil
}

// Run connects (getMe), publishes the commands, and receives updates until
// ctx is done: by webhook when webhook_url is set, else by long polling.
// On the way out it stops receiving, lets the replies in progress finish
// (for up to 20 s; then they are cancelled and their updates stay pending
// for the next start) and returns nil. Errors come back when the token is
// refused (ErrUnauthorized), the webhook cannot be set or served, or the
// saved offset cannot be read.
func (a *Adapter) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer a.running.Store(false)
	api, err := a.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	a.api, a.work = api, work
	maxImage := a.MaxImageBytes
	if maxImage <= 0 {
		maxImage = defaultMaxImageBytes
	}
	a.rt = router{self: api.Self, allowGroups: a.cfg.AllowGroups, allowed: newAllowList(a.cfg.AllowedUsers), maxImage: maxImage, source: a.fileSource}
	if a.fileRoot == "" {
		a.log.Warn("telegram.api_endpoint does not end in /bot%s/%s: no file endpoint can be derived, so pictures, voice notes and files sent to the bot are refused")
	}
	if names := a.rt.allowed.usernames(); len(names) > 0 {
		a.log.Warn("telegram.allowed_users: a username is bound to the id of the first user seen with it, until the next start; names can change, write user ids instead",
			"usernames", strings.Join(names, ","))
	}
	a.inbox = nil
	if a.hook == nil {
		a.inbox = &inbox{state: a.p, key: offsetKey(api.Self.ID)}
	}
	a.ready.Store(true)
	a.log.Info("connected", "bot", api.Self.UserName, "mode", a.mode())
	if err := a.publishCommands(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("publish commands", "err", err)
	}
	a.resume(work)
	if a.hook != nil {
		err = a.serveWebhook(ctx)
	} else {
		err = a.poll(ctx)
	}
	a.ready.Store(false)
	a.drain(cancelWork)
	a.log.Info("stopped")
	return err
}

// resume has the pipeline answer what a process that stopped left accepted
// or unanswered in Telegram chats (bot.Engine.Resume): every chat can be
// written from any replica.
func (a *Adapter) resume(ctx context.Context) {
	err := a.p.Resume(ctx, bot.PlatformTelegram, func(ref bot.ChannelRef) (bot.Sink, bool) {
		id, err := strconv.ParseInt(ref.ID, 10, 64)
		if err != nil {
			return nil, false
		}
		return &sink{a: a, chatID: id}, true
	})
	if err != nil && ctx.Err() == nil {
		a.log.Warn("resume unanswered chats", "err", err)
	}
}

func (a *Adapter) mode() string {
	if a.hook != nil {
		return "webhook"
	}
	return "polling"
}

// connect calls getMe until it answers: a refused token is an error at
// once, a network failure or a 5xx is retried with backoff until ctx ends.
func (a *Adapter) connect(ctx context.Context) (*tgbotapi.BotAPI, error) {
	endpoint := a.cfg.APIEndpoint
	if endpoint == "" {
		endpoint = tgbotapi.APIEndpoint
	}
	backoff := time.Second
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		api, err := tgbotapi.NewBotAPIWithClient(a.cfg.Token.Value(), endpoint, ctxClient{ctx: cctx, c: a.httpc})
		cancel()
		if err == nil {
			api.Client = a.httpc
			return api, nil
		}
		err = apiError("getMe", a.cfg.Token.Value(), err)
		if e, ok := asAPI(err); ok && (e.Code == 401 || e.Code == 404) {
			return nil, fmt.Errorf("%w: %v", ErrUnauthorized, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		d, limited := retryAfter(err)
		if !limited {
			d, backoff = backoff, min(2*backoff, 30*time.Second)
		}
		a.log.Warn("connect failed, retrying", "err", err, "retry_in", d)
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// publishCommands sets the command menu from bot.Commands.
func (a *Adapter) publishCommands(ctx context.Context) error {
	cmds := make([]tgbotapi.BotCommand, 0, len(bot.Commands))
	for _, c := range bot.Commands {
		cmds = append(cmds, tgbotapi.BotCommand{Command: c.Name, Description: c.Description})
	}
	_, err := a.do(ctx, "setMyCommands", tgbotapi.NewSetMyCommands(cmds...), true)
	return err
}

// drain waits for the chats' work to end; after drainTimeout it cancels the
// work and waits a little more.
func (a *Adapter) drain(cancelWork context.CancelFunc) {
	done := make(chan struct{})
	go func() {
		// The chats' ordered work comes first: it hands its replies'
		// settling to a.wg before it ends.
		a.order.Wait()
		a.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(a.drainTimeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	a.log.Warn("replies still running at shutdown; cancelling them, their updates stay pending")
	cancelWork()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		a.log.Error("replies did not stop after cancellation")
	}
}
