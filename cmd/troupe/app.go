package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"troupe/adapters/discord"
	"troupe/adapters/telegram"
	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/ops"
	"troupe/prompt"
	"troupe/usage"
)

// app is troupe's wired components, shared by serve, worker and chat.
type app struct {
	cfg      config.Config
	log      *slog.Logger
	store    *models.Store
	redis    *jobs.Redis
	queue    *jobs.Queue
	memory   *memory.Service
	pipeline *bot.Pipeline
	cards    *cards.Library
	metrics  *ops.Metrics
	// usage counts the model calls by kind until stopUsage's flusher
	// writes them to the store.
	usage     *usage.Counter
	stopUsage func()
}

// The store must keep the record and beliefs: memory finds them by a run-time
// check, and a changed method would otherwise turn every record and
// reflection into a silent skip.
var _ memory.ReflectStore = (*models.Store)(nil)

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*models.Store, error) {
	return models.Open(ctx, cfg.Database.DSN.Value(), log)
}

// The store is what the memory service and the pipeline work on.
var (
	_ bot.Store          = (*models.Store)(nil)
	_ memory.Store       = (*models.Store)(nil)
	_ memory.RecordStore = (*models.Store)(nil)
	_ bot.RecordJobs     = jobsBridge{}
	_ bot.Recorder       = (*memory.Service)(nil)
	_ bot.Reflector      = (*memory.Service)(nil)
)

// openApp connects storage and queue and builds the pipeline around cards;
// the pipeline reports its turns to the metrics and to each of also.
func openApp(ctx context.Context, cfg config.Config, log *slog.Logger, cards *cards.Library, also ...bot.Observer) (*app, error) {
	return openAppWith(ctx, cfg, log, cards, nil, also...)
}

// openAppWith is openApp with lore attached to every chat (the console's
// --lore), next to the worlds of the card folder that cards name.
func openAppWith(ctx context.Context, cfg config.Config, log *slog.Logger, cards *cards.Library, lore []*cards.Book, also ...bot.Observer) (*app, error) {
	a := &app{cfg: cfg, log: log, cards: cards}
	var err error
	if a.store, err = openStore(ctx, cfg, log); err != nil {
		return nil, err
	}
	if a.redis, err = jobs.OpenRedis(ctx, cfg.Redis.URL.Value()); err != nil {
		a.Close()
		return nil, err
	}
	a.queue = jobs.NewQueue(a.redis, log)
	a.metrics = ops.NewMetrics(a.queue, a.store)
	for _, side := range cfg.KeylessSideEndpoints() {
		log.Warn("a side endpoint on another server than the main model's is sent no API key; set its api_key if it needs one", "endpoint", side)
	}
	mc := memory.ConfigFrom(cfg.Memory, cfg.Language)
	mc.Reflect = memory.ReflectConfigFrom(cfg.Reflection)
	a.usage = &usage.Counter{}
	a.stopUsage = a.flushUsage(usageFlush)
	scribe := newScribe(cfg, log, 0, a.usage)
	mc.ContextWindow, mc.AnswerTokens = scribeWindow(ctx, cfg, scribe.C, log), cfg.ScribeModel().MaxReplyTokens
	if w := mc.ContextWindow; w > 0 && mc.AnswerTokens > w/2 {
		// An endpoint refuses a prompt whose answer may not fit after it:
		// the answer gets half the window, the prompt the rest.
		mc.AnswerTokens = w / 2
		scribe = newScribe(cfg, log, mc.AnswerTokens, a.usage)
	}
	a.memory = memory.NewService(a.store, scribe, mc, log)
	// The reflections of a space serialize across serve and worker processes.
	a.memory.UseLocker(jobs.NewLocker(a.redis).WithLogger(log))
	// Every forget (/forget, troupe memory forget, the inspector's) goes
	// through the memory service: the kept originals go with the chat.
	a.memory.UseForgetFiles(forgetKept(cfg))
	vectors, reranker := recallParts(cfg, a.store, a.usage)
	if vectors != nil {
		q := a.queue
		a.memory.UseVectors(vectors, func(ctx context.Context, chatID string) error { return q.Embed(ctx, chatID) })
	}
	// A channel's turns are serialized across processes by a lock in
	// Redis; an in-process Redis has no other process to keep out, and
	// the pipeline's lanes already order the turns of this one (the lock
	// cost two scripts a turn).
	var channelLocks bot.Locker
	if !a.redis.Embedded() {
		channelLocks = jobs.NewLocker(a.redis).WithLogger(log)
	}
	m := cfg.Model
	model := llm.New(llm.Config{BaseURL: m.BaseURL, APIKey: m.APIKey.Value(), Model: m.Name,
		Temperature: float32(m.Temperature), MaxTokens: m.MaxReplyTokens, Timeout: m.Timeout, MaxRetries: retries(m.MaxRetries), Meter: a.usage}, log)
	voicer, painter := outboundMedia(cfg, log, a.usage)
	im := newInboundMedia(cfg, log, a.usage)
	limits := bot.Limits{PerMinute: cfg.Limits.RatePerMinute, MaxChars: cfg.Limits.MaxMessageChars,
		ChannelTokensPerMinute: cfg.Limits.ChannelTokensPerMinute, TokensPerMinute: cfg.Limits.TokensPerMinute}
	a.pipeline = bot.New(bot.Options{
		Store:           a.store,
		Cards:           cards,
		Model:           model,
		Jobs:            jobsBridge{q: a.queue, idle: cfg.Memory.IdleRecap},
		Memory:          a.memory,
		Tokens:          prompt.NewEstimator(),
		MemoryConfig:    cfg.Memory,
		Recorder:        cfg.Recorder,
		Scene:           cfg.Scene,
		Recall:          cfg.Recall,
		RecallVectors:   vectors,
		Reranker:        reranker,
		Language:        cfg.Language,
		ContextWindow:   m.ContextWindow,
		MaxReplyTokens:  m.MaxReplyTokens,
		Logger:          log,
		Observer:        append(observers{a.metrics}, also...),
		Locker:          channelLocks,
		Questions:       jobs.NewQuestions(a.redis),
		Limits:          limits,
		NewByAnyone:     !cfg.Groups.NewNeedsManager,
		ConcurrentTurns: cfg.Limits.ConcurrentTurns,
		LoreConfig:      cfg.Lore,
		Worlds:          loadWorlds(cfg.Cards, log),
		Lore:            lore,
		PromptTraces:    cfg.Web.PromptTraces(),
		ModelName:       m.Name,
		Voicer:          voicer,
		Voice:           cfg.TTS.Voice,
		Painter:         painter,
		Vision:          im.vision,
		CaptionModel:    im.caption,
		Transcriber:     im.stt,
		Media:           im.opt,
	})
	return a, nil
}

// newScribe is the memory service's scribe client (scribe.*, what is empty
// taken from model.*; its key only on the main model's server); answer,
// when positive, replaces scribe.max_reply_tokens.
func newScribe(cfg config.Config, log *slog.Logger, answer int, meter usage.Meter) llm.Scribe {
	sm := cfg.ScribeModel()
	c := llm.New(llm.Config{BaseURL: sm.BaseURL, APIKey: sm.APIKey.Value(), Model: sm.Name,
		Temperature: float32(sm.Temperature), MaxTokens: cmp.Or(answer, sm.MaxReplyTokens), Timeout: sm.Timeout, MaxRetries: retries(sm.MaxRetries), Meter: meter}, log)
	return llm.Scribe{C: c, JSON: cfg.Recorder.JSONMode}
}

// windowLookup bounds the question to the scribe's endpoint about its
// window at startup.
const windowLookup = 5 * time.Second

// scribeWindow is the scribe's context window: scribe.context_window (the
// main model's when the scribe is the main model), else the one the
// endpoint's model list reports, else 0, which memory takes as its safe
// default.
func scribeWindow(ctx context.Context, cfg config.Config, c *llm.Client, log *slog.Logger) int {
	if w := cfg.ScribeModel().ContextWindow; w > 0 {
		return w
	}
	ctx, cancel := context.WithTimeout(ctx, windowLookup)
	defer cancel()
	w, err := c.ReportedWindow(ctx)
	switch {
	case err != nil:
		log.Info("the scribe's endpoint did not say its context window; using the default", "window", memory.DefaultScribeWindow, "err", err)
	case w == 0:
		log.Info("the scribe's model list gives no context window; using the default (set scribe.context_window)", "window", memory.DefaultScribeWindow)
	default:
		log.Info("the scribe's context window, as its endpoint reports it", "window", w)
	}
	return w
}

// recallParts builds recall's optional vector source and rerank client
// from recall.embeddings and recall.rerank; nil for each that is not set.
// Without a rerank the result is a nil interface, not a nil pointer in one.
func recallParts(cfg config.Config, store *models.Store, meter usage.Meter) (*memory.Vectors, memory.Reranker) {
	var vectors *memory.Vectors
	var reranker memory.Reranker
	rc := cfg.Recall
	if e := cfg.RecallEmbeddings(); e.On() {
		emb := llm.NewEmbedder(llm.EmbedConfig{BaseURL: e.BaseURL, APIKey: e.APIKey.Value(), Model: e.Model, Dimensions: e.Dimensions, Meter: meter})
		vectors = memory.NewVectors(emb, store, e.Model, int64(rc.VectorCacheMB)<<20)
	}
	if r := cfg.RecallRerank(); r.On() {
		reranker = llm.NewReranker(llm.RerankConfig{BaseURL: r.BaseURL, APIKey: r.APIKey.Value(), Model: r.Model, Meter: meter})
	}
	return vectors, reranker
}

// loadWorlds reads the world-info files (cards.worlds_dir, else worlds/
// inside or beside cards.dir); one that does not load is logged with why
// and skipped, and so is each key of a world that does not compile.
func loadWorlds(cc config.Cards, log *slog.Logger) *cards.Worlds {
	w, errs := cards.LoadWorldsFrom(cards.WorldDirs(cc.Dir, cc.WorldsDir)...)
	for _, err := range errs {
		log.Warn("world file skipped", "err", err)
	}
	for _, name := range w.Names() {
		b, _ := w.Get(name)
		for _, warn := range b.Warnings() {
			log.Warn("world key", "world", name, "problem", warn)
		}
	}
	return w
}

// retries maps the config's retry count to the client's: 0 means none.
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// worker builds the job worker on the app's queue.
func (a *app) worker() *jobs.Worker {
	return a.workerWith(0)
}

// workerWith is worker with the time a stopping worker gives running jobs
// (0: the default); a console or an eval case that is left stops at once.
func (a *app) workerWith(shutdown time.Duration) *jobs.Worker {
	return jobs.NewWorker(a.redis, a.queue, a.memory, a.store, jobs.WorkerOptions{
		Concurrency:     a.cfg.Limits.ConcurrentJobs,
		ShutdownTimeout: shutdown,
		SweepInterval:   a.cfg.Memory.SweepInterval,
		IdleRecap:       a.cfg.Memory.IdleRecap,
		Observer:        a.metrics,
		Recorder:        a.cfg.Recorder.Enabled,
		RecordBatch:     a.cfg.Recorder.Batch,
		Reflect:         a.cfg.Recorder.Enabled,
		Embed:           a.cfg.Recorder.Enabled && a.cfg.Recall.Embeddings.On(),

		ReorganizeBatches: a.cfg.Memory.ReorganizeBatches,
		ReorganizeTokens:  a.cfg.Memory.ReorganizeTokens,
		ReorganizeNight:   a.cfg.Memory.LastReorganizeTime,
		TurnsActive:       a.turnsActive(),
	}, a.log)
}

// turnsActive is the worker's view of this process's pipeline: nil when
// the process has none.
func (a *app) turnsActive() func() bool {
	if a.pipeline == nil {
		return nil
	}
	return a.pipeline.Active
}

// Close releases everything the app opened.
func (a *app) Close() error {
	var errs []error
	if a.stopUsage != nil {
		// The last counts go in while the store is open.
		a.stopUsage()
	}
	if a.redis != nil {
		errs = append(errs, a.redis.Close())
	}
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	return errors.Join(errs...)
}

// jobsBridge tells the queue what a turn or command left owed.
type jobsBridge struct {
	q    *jobs.Queue
	idle time.Duration
}

// AfterTurn enqueues a due compaction and (re)starts the chat's idle timer.
func (j jobsBridge) AfterTurn(ctx context.Context, t bot.TurnDone) error {
	var errs []error
	if t.CompactionDue {
		errs = append(errs, j.q.Compact(ctx, t.ChatID, t.Urgent))
	}
	errs = append(errs, j.q.RecapWhenIdle(ctx, t.ChatID, j.idle))
	return errors.Join(errs...)
}

// Record owes the chat's recorder run (now: without waiting for a batch).
func (j jobsBridge) Record(ctx context.Context, chatID string, now bool) error {
	return j.q.Record(ctx, chatID, now)
}

// ChatEnded owes the ended chat's recap now; with the recorder on, the recap
// job records the chat first, its last turn included (no /regen reaches it
// any more).
func (j jobsBridge) ChatEnded(ctx context.Context, chatID string) error {
	return j.q.RecapNow(ctx, chatID)
}

// MemoryChanged owes the consolidation of a card's memory in a space.
func (j jobsBridge) MemoryChanged(ctx context.Context, cardID, spaceID string) error {
	return j.q.Consolidate(ctx, cardID, spaceID)
}

// serve runs the adapters (when adapters is true) and the job workers until
// ctx is done. On shutdown the adapters stop taking messages first, then the
// pipeline lets the replies in flight finish (up to shutdownTimeout), and
// the workers leave unfinished jobs owed.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, mode serveMode) error {
	adapters := mode == serveAll
	lib, err := cards.LoadLibrary(cfg.Cards.Dir, cfg.Cards.Default)
	if err != nil {
		// The library is configuration: a bad one exits 2, naming the key.
		key := "cards.dir"
		if errors.Is(err, cards.ErrNoDefault) {
			key = "cards.default"
		}
		return &config.Error{Key: key, Problem: err.Error()}
	}
	logCardFailures(log, lib)
	if adapters && len(lib.List()) == 0 {
		return fmt.Errorf("no cards in %s: put Tavern cards there (JSON, PNG or CHARX; see examples/cards)", cfg.Cards.Dir)
	}
	a, err := openApp(ctx, cfg, log, lib)
	if err != nil {
		return err
	}
	defer a.Close()
	var runners []interface{ Run(context.Context) error }
	var names []string
	if adapters {
		if cfg.Discord.Token != "" {
			d, err := discord.New(cfg.Discord, a.pipeline, log)
			if err != nil {
				return err
			}
			runners, names = append(runners, d), append(names, "discord")
		}
		if cfg.Telegram.Token != "" {
			tg, err := telegram.New(cfg.Telegram, a.pipeline, log)
			if err != nil {
				return err
			}
			tg.MaxImageBytes = int64(cfg.Media.MaxImageBytes)
			runners, names = append(runners, tg), append(names, "telegram")
		}
		if len(runners) == 0 {
			log.Warn("no adapter configured: set discord.token and/or telegram.token; running the workers only")
		}
	}
	log.Info("serving", "adapters", strings.Join(names, ","), "cards", len(lib.List()), "database", a.store.Dialect(), "embedded_redis", a.redis.Embedded())
	g, gctx := errgroup.WithContext(ctx)
	w := a.worker()
	g.Go(func() error { return w.Run(gctx) })
	if cfg.Ops.Listen != "" {
		srv := ops.NewServer(cfg.Ops.Listen, a.metrics, map[string]ops.Check{"database": a.store.Ping, "redis": a.redis.Ping}, log)
		g.Go(func() error {
			// A second process on the same machine (serve next to worker)
			// keeps running without its own endpoint.
			if err := srv.Run(gctx); err != nil {
				log.Warn("operations endpoint not available; set ops.listen to a free address", "addr", cfg.Ops.Listen, "err", err)
			}
			return nil
		})
	}
	g.Go(func() error { return runInspector(gctx, cfg, a, log, mode) })
	adaptersDone := make(chan struct{})
	ag, actx := errgroup.WithContext(gctx)
	for _, r := range runners {
		ag.Go(func() error { return r.Run(actx) })
	}
	g.Go(func() error {
		defer close(adaptersDone)
		return ag.Wait()
	})
	g.Go(func() error {
		<-gctx.Done()
		<-adaptersDone
		// Stop taking turns; let the ones in flight finish.
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		return a.pipeline.Close(sctx)
	})
	return g.Wait()
}
