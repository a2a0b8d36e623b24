package discord

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/config"
	"troupe/keyed"
	"troupe/media"
)

// intents are the gateway events the adapter needs. Message content is a
// privileged intent: it must also be switched on in the developer portal.
const intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsMessageContent | discordgo.IntentsDirectMessages

// Adapter connects one Discord bot (one shard of it) to the pipeline.
type Adapter struct {
	cfg config.Discord
	p   bot.Engine
	log *slog.Logger
	// libLog takes discordgo's own log lines once the adapter runs.
	libLog   *slog.Logger
	guilds   map[string]bool
	channels map[string]bool
	tuning   tuning

	mu      sync.Mutex
	botID   string
	appID   string
	running bool
	stopped bool
	// adminRoles are the role ids of discord.admin_roles, the names
	// resolved at start included.
	adminRoles map[string]bool
	// readyAt is when the gateway last said READY or RESUMED.
	readyAt time.Time

	// work is the context of everything the adapter does for an event; it
	// outlives Run's context by the drain time so running turns can finish.
	work       context.Context
	cancelWork context.CancelFunc
	wg         sync.WaitGroup

	// fetch downloads message files, from the file hosts alone.
	fetch media.Fetcher

	// queues keeps each channel's events in order (inOrder).
	queues   keyed.Runner[string]
	places   places
	hooks    hooks
	confirms confirms
	swiped   swipedReplies
	hint     sync.Once
}

// tuning holds the adapter's timings; tests shorten them.
type tuning struct {
	// editInterval is the least time between two edits of one message.
	editInterval time.Duration
	// typingEvery repeats the typing indicator, which Discord shows for 10 s.
	typingEvery time.Duration
	// ackAfter is how long a slash command may take before it is deferred;
	// Discord wants an answer within 3 s.
	ackAfter time.Duration
	// drain is how long Run waits for running turns when it stops.
	drain time.Duration
	// retryWait is the first pause between attempts to deliver a reply.
	retryWait time.Duration
}

func defaultTuning() tuning {
	return tuning{editInterval: time.Second, typingEvery: 8 * time.Second, ackAfter: 1500 * time.Millisecond,
		drain: 30 * time.Second, retryWait: time.Second}
}

// Option changes how New builds an Adapter.
type Option func(*Adapter)

// New returns an adapter for the bot in cfg on pipeline p. It does no I/O.
// It fails with ErrNoToken without a token, and on a discord.space it does
// not know ("" means audience).
func New(cfg config.Discord, p bot.Engine, log *slog.Logger, opts ...Option) (*Adapter, error) {
	if strings.TrimSpace(cfg.Token.Value()) == "" {
		return nil, ErrNoToken
	}
	if p == nil {
		return nil, fmt.Errorf("discord: no pipeline")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ShardCount < 1 {
		cfg.ShardCount = 1
	}
	if cfg.ShardID < 0 || cfg.ShardID >= cfg.ShardCount {
		return nil, fmt.Errorf("discord: shard %d is not below shard count %d", cfg.ShardID, cfg.ShardCount)
	}
	switch cfg.Space {
	case "":
		cfg.Space = config.SpaceAudience
	case config.SpaceAudience, config.SpaceGuild, config.SpaceChannel:
	default:
		return nil, fmt.Errorf("discord: space %q is not audience, guild or channel", cfg.Space)
	}
	if cfg.APIBaseURL != "" {
		if _, err := newRebase(cfg.APIBaseURL, nil); err != nil {
			return nil, err
		}
	}
	if err := checkFileHost(cfg.CDNBaseURL); err != nil {
		return nil, err
	}
	a := &Adapter{
		cfg:      cfg,
		p:        p,
		log:      log.With("component", "discord", "shard", cfg.ShardID),
		libLog:   log,
		guilds:   set(cfg.AllowedGuilds, false),
		channels: set(cfg.AllowedChannels, false),
		tuning:   defaultTuning(),
		fetch:    newFetcher(fileHosts(cfg)),
	}
	a.adminRoles, _ = adminRoleIDs(cfg.AdminRoles)
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

func set(items []string, fold bool) map[string]bool {
	m := map[string]bool{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		if fold {
			it = strings.ToLower(it)
		}
		if it != "" {
			m[it] = true
		}
	}
	return m
}

// session builds the discordgo session: token, intents, shard, HTTP client.
func (a *Adapter) session() (*discordgo.Session, error) {
	s, err := restSession(a.cfg)
	if err != nil {
		return nil, err
	}
	s.Identify.Intents = intents
	s.ShardID, s.ShardCount = a.cfg.ShardID, a.cfg.ShardCount
	// Events come in order on the gateway goroutine; the adapter hands them
	// to its own goroutines so that one channel's messages keep their order.
	s.SyncEvents = true
	s.State.TrackEmojis, s.State.TrackStickers, s.State.TrackVoice = false, false, false
	s.State.TrackPresences, s.State.TrackMembers, s.State.TrackThreadMembers = false, false, false
	// Each handler runs under a recover (recover.go): a panic in one event
	// is answered and counted, and the gateway goes on with the next.
	s.AddHandler(guarded(a, "discord_ready", func(*discordgo.Ready) string { return "" }, a.onReady))
	s.AddHandler(guarded(a, "discord_resumed", func(*discordgo.Resumed) string { return "" }, a.onResumed))
	s.AddHandler(guarded(a, "discord_message", func(e *discordgo.MessageCreate) string { return e.ChannelID }, a.onMessageCreate))
	s.AddHandler(guarded(a, "discord_edit", func(e *discordgo.MessageUpdate) string { return e.ChannelID }, a.onMessageUpdate))
	s.AddHandler(guarded(a, "discord_interaction", func(e *discordgo.InteractionCreate) string { return e.ChannelID }, a.onInteraction))
	s.AddHandler(guarded(a, "discord_channel_update", func(*discordgo.ChannelUpdate) string { return "" }, a.onChannelUpdate))
	s.AddHandler(guarded(a, "discord_channel_delete", func(*discordgo.ChannelDelete) string { return "" }, a.onChannelDelete))
	s.AddHandler(guarded(a, "discord_thread_update", func(*discordgo.ThreadUpdate) string { return "" }, a.onThreadUpdate))
	s.AddHandler(guarded(a, "discord_role_update", func(*discordgo.GuildRoleUpdate) string { return "" }, a.onRoleUpdate))
	return s, nil
}

// restSession is a discordgo session for REST calls: the token and, with
// discord.api_base_url, requests sent there.
func restSession(cfg config.Discord) (*discordgo.Session, error) {
	token := strings.TrimSpace(cfg.Token.Value())
	if !strings.HasPrefix(token, "Bot ") {
		token = "Bot " + token
	}
	s, err := discordgo.New(token)
	if err != nil {
		return nil, fmt.Errorf("discord: session: %w", err)
	}
	if cfg.APIBaseURL != "" {
		rb, err := newRebase(cfg.APIBaseURL, http.DefaultTransport)
		if err != nil {
			return nil, err
		}
		s.Client = &http.Client{Timeout: 20 * time.Second, Transport: rb}
	}
	return s, nil
}

// Run connects to the gateway, registers the slash commands and serves until
// ctx is done; then it closes the connection and waits (up to 30 s) for
// running turns. It returns an error when it cannot connect or was already
// started.
func (a *Adapter) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return ErrRunning
	}
	a.running = true
	a.work, a.cancelWork = context.WithCancel(context.WithoutCancel(ctx))
	a.mu.Unlock()
	defer a.cancelWork()
	routeLibraryLogs(a.libLog)

	s, err := a.session()
	if err != nil {
		return err
	}
	a.resolveAdminRoles(ctx, s)
	if err := s.Open(); err != nil {
		return fmt.Errorf("discord: connect: %w", err)
	}
	a.log.Info("connected", "bot_id", a.bot(), "api", a.apiName())
	if a.cfg.ShardID == 0 {
		// One shard registers, so replicas do not overwrite each other.
		if err := a.registerCommands(ctx, s); err != nil {
			a.log.Error("register slash commands", "err", err)
		}
	} else {
		a.log.Debug("slash commands left to shard 0")
	}
	<-ctx.Done()
	return a.shutdown(s)
}

func (a *Adapter) apiName() string {
	if a.cfg.APIBaseURL == "" {
		return "discord.com"
	}
	return a.cfg.APIBaseURL
}

func (a *Adapter) shutdown(s *discordgo.Session) error {
	a.log.Info("closing gateway connection")
	a.awaitHeartbeat(s)
	closeErr := s.Close()
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(a.tuning.drain):
		a.log.Warn("turns still running after the drain time; cancelling them")
		a.cancelWork()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			a.log.Error("turns did not stop after cancel")
		}
	}
	a.confirms.stop()
	if closeErr != nil {
		return fmt.Errorf("discord: close: %w", closeErr)
	}
	return nil
}

// awaitHeartbeat waits (up to two seconds) until the gateway acknowledged a
// heartbeat sent after the last READY or RESUMED. discordgo's heartbeat
// goroutine, if it has not sent its first heartbeat when Close runs, sends it
// on the closed connection afterwards and starts reconnecting on its own.
func (a *Adapter) awaitHeartbeat(s *discordgo.Session) {
	a.mu.Lock()
	since := a.readyAt
	a.mu.Unlock()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		s.RLock()
		acked := s.LastHeartbeatAck.After(since)
		s.RUnlock()
		if acked {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// begin counts a piece of work that shutdown waits for; it reports false once
// the adapter has stopped.
func (a *Adapter) begin() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.wg.Add(1)
	return true
}

// spawn runs fn as counted work.
func (a *Adapter) spawn(fn func()) bool {
	if !a.begin() {
		return false
	}
	go func() {
		defer a.wg.Done()
		defer a.recovered(nil, "discord_task", nil)
		fn()
	}()
	return true
}

func (a *Adapter) bot() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID
}

func (a *Adapter) app() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appID
}

func (a *Adapter) onReady(s *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	a.readyAt = time.Now()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if r.Application != nil && r.Application.ID != "" {
		a.appID = r.Application.ID
	} else if a.appID == "" && r.User != nil {
		a.appID = r.User.ID
	}
	a.mu.Unlock()
	a.log.Info("gateway ready", "guilds", len(r.Guilds))
	a.spawn(func() { a.resume(s) })
}

func (a *Adapter) onResumed(s *discordgo.Session, r *discordgo.Resumed) {
	a.mu.Lock()
	a.readyAt = time.Now()
	a.mu.Unlock()
	a.log.Info("gateway session resumed")
}
