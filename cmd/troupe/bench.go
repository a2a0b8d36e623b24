package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/llm/openaitest"
	"troupe/memory"
	"troupe/memory/memorytest"
	"troupe/models"
)

// defaultBenchCard is the card bench plays when --card is not given; a
// small built-in card stands in when the file is not there (bench run
// outside the source tree).
const defaultBenchCard = "examples/cards/lantern-keeper.json"

// benchOptions are bench's flags.
type benchOptions struct {
	channels int
	turns    int
	latency  time.Duration
	jsonPath string
	dsn      string
	redis    string
	keepDB   bool
	card     string
	profile  string
	// seedPerceptions seeds the card's character with this many
	// perceptions before the turns, so that recall searches a long story.
	seedPerceptions int
}

// benchResult is what one bench run measured. Times are in milliseconds,
// sizes in MiB.
type benchResult struct {
	Database        string  `json:"database"`
	Redis           string  `json:"redis"`
	Card            string  `json:"card"`
	Channels        int     `json:"channels"`
	TurnsPerChannel int     `json:"turns_per_channel"`
	ModelLatencyMS  float64 `json:"model_latency_ms"`

	Turns       int `json:"turns"`
	Replies     int `json:"replies"`
	FailedTurns int `json:"failed_turns"`
	// FirstFailure is what the first failed turn said or returned.
	FirstFailure   string  `json:"first_failure,omitempty"`
	WallSeconds    float64 `json:"wall_seconds"`
	TurnsPerSecond float64 `json:"turns_per_second"`
	PipelineP50MS  float64 `json:"pipeline_p50_ms"`
	PipelineP99MS  float64 `json:"pipeline_p99_ms"`
	PipelineMaxMS  float64 `json:"pipeline_max_ms"`
	// The steady state leaves out each channel's opening turn, which
	// creates its channel and chat: the turns after every channel opened.
	SteadyTurnsPerSecond float64 `json:"steady_turns_per_second"`
	SteadyP50MS          float64 `json:"steady_pipeline_p50_ms"`
	SteadyP99MS          float64 `json:"steady_pipeline_p99_ms"`
	SteadyMaxMS          float64 `json:"steady_pipeline_max_ms"`
	// ConcurrentTurns is the pipeline's gate: how many turns did their own
	// work at once. The others waited in line for a slot; the queue figures
	// are that wait (not part of the pipeline time), overall and after the
	// openings.
	ConcurrentTurns int     `json:"concurrent_turns"`
	QueueP50MS      float64 `json:"queue_p50_ms"`
	QueueP99MS      float64 `json:"queue_p99_ms"`
	SteadyQueueP50  float64 `json:"steady_queue_p50_ms"`
	SteadyQueueP99  float64 `json:"steady_queue_p99_ms"`
	// CPUMSPerTurn is this process's CPU time (user and system, the fake
	// model included) per answered turn while the turns ran; 0 where
	// /proc/self/stat is not there.
	CPUMSPerTurn float64 `json:"cpu_ms_per_turn"`
	// PromptTokensFirst and PromptTokensLast are the mean prompt tokens of
	// the first and of the last turn of each channel, as the model reported
	// them.
	PromptTokensFirst float64 `json:"prompt_tokens_first"`
	PromptTokensLast  float64 `json:"prompt_tokens_last"`
	// PrefixReuseMedian is the median share of a chat turn's prompt, as
	// sent, that starts with the same bytes as its channel's previous
	// prompt: what a provider's prompt cache can reuse. PrefixReusePairs
	// is how many turn pairs it is taken over.
	PrefixReuseMedian float64 `json:"prefix_reuse_median"`
	PrefixReusePairs  int     `json:"prefix_reuse_pairs"`

	MessagesStored  int64 `json:"messages_stored"`
	SummariesStored int64 `json:"summaries_stored"`
	ChatRequests    int64 `json:"chat_requests"`
	ScribeRequests  int   `json:"scribe_requests"`
	// SideRequests counts the side model's calls by kind: summary,
	// recap, consolidate, record, reflect and belief_check.
	SideRequests map[string]int `json:"side_requests"`
	// Recalls counts the answered turns' recall by how it went
	// (bot.RecallFull, RecallFewer, RecallCached, RecallLate).
	Recalls map[string]int `json:"recalls,omitempty"`
	// Statements and round trips per answered turn, as the store sent
	// them: the turns' own and the memory jobs' (models.Statements; round
	// trips as PostgreSQL counts them).
	StatementsPerTurn    float64 `json:"statements_per_turn"`
	RoundTripsPerTurn    float64 `json:"round_trips_per_turn"`
	JobStatementsPerTurn float64 `json:"job_statements_per_turn"`
	JobRoundTripsPerTurn float64 `json:"job_round_trips_per_turn"`
	// TurnsPerSecondDrained counts the jobs' drain in the time: turns
	// answered over the wall time plus the drain.
	TurnsPerSecondDrained float64 `json:"turns_per_second_drained"`
	// JobsDrainSeconds is how long the worker took, after the last turn,
	// to finish the memory jobs the turns left owed.
	JobsDrainSeconds float64 `json:"jobs_drain_seconds"`

	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	PeakRSSSource string  `json:"peak_rss_source"`
	SQLitePath    string  `json:"sqlite_path,omitempty"`
}

func (c *cli) benchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the turn pipeline under load against a fake model",
		Long: `Measure the turn pipeline under load. bench starts a fake OpenAI-compatible
model on loopback, builds the real pipeline and job worker in this process, and
plays --channels conversations of --turns turns each at once: one goroutine per
conversation, its turns in order. Every conversation's opening turn (which
creates its channel and chat) finishes before any plays its second; the
"after the openings" line reports the turns after that point. With --latency
the conversations are spread over one latency, so that turns arrive as a
stream rather than in waves.

It reports turns per second, the pipeline's own time per turn (model time
excluded, queueing for the database and the CPU included), how long turns
waited in line for one of the pipeline's slots before that (the
limits.concurrent_turns gate; with every conversation busy at once and an
instant model this is where the load queues), this process's CPU per turn, the prompt tokens of the first and the last turn of a conversation,
the median share of a turn's prompt that starts with the same bytes as its
conversation's previous prompt (what a provider's prompt cache can reuse),
the messages stored, and the peak memory of the process (which holds the fake
model and, by default, the database and Redis too). It fails when a turn went
unanswered or fewer than 2×C×T messages were stored. --profile DIR writes
CPU, block and mutex profiles of the turns for go tool pprof.

By default it runs on a temporary SQLite file and an in-process Redis, never on
the configured database. --dsn postgres://… --redis redis://… benchmarks the
deployed shape; give it a database and a Redis db that hold nothing you need.
The memory settings come from the configuration and TROUPE_* variables as
usual: with the default memory.period (30) and keep (6), compaction starts
after 36 turns, so use --turns 100 (or a smaller TROUPE_MEMORY_PERIOD) to see
prompts stop growing. The per-user rate limit is off during the bench.
--seed-perceptions N gives the card's character N perceptions first (in a
chat of their own, indexed as the recorder's are), so that each turn's
recall searches a long story. The store is then settled as a live one of
that size would be: on PostgreSQL the seeded tables are vacuumed and a
CHECKPOINT written (it needs a superuser or pg_checkpoint), on SQLite the
WAL is copied into the database file, and then the machine's dirty pages
are written out (sync), so that the turns do not wait for the bulk load's
pages to be written out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.channels < 1 || o.turns < 1 {
				return usageError{errors.New("--channels and --turns must be at least 1")}
			}
			if o.seedPerceptions < 0 {
				return usageError{errors.New("--seed-perceptions must not be negative")}
			}
			if o.latency < 0 {
				return usageError{errors.New("--latency must not be negative")}
			}
			cfg, err := c.load()
			if err != nil {
				return err
			}
			logCfg := cfg.Log
			if logCfg.Level == "info" {
				// Keep the report readable; warnings still show.
				logCfg.Level = "warn"
			}
			card, cardSource, err := benchCard(o.card, cmd.Flags().Changed("card"))
			if err != nil {
				return usageError{fmt.Errorf("--card: %w", err)}
			}
			res, err := runBench(cmd.Context(), cfg, o, card, newLogger(logCfg, c.stderr))
			if res == nil {
				return err
			}
			res.Card = cardSource
			if werr := c.writeBench(res, o.jsonPath); werr != nil {
				return errors.Join(err, werr)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.channels, "channels", 100, "conversations played at once")
	f.IntVar(&o.turns, "turns", 20, "turns per conversation")
	f.DurationVar(&o.latency, "latency", 0, "how long the fake model waits before each reply")
	f.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file (- for stdout)")
	f.StringVar(&o.dsn, "dsn", "", "database to use (sqlite://FILE or postgres://…); default a temporary SQLite file")
	f.StringVar(&o.redis, "redis", "", "Redis to queue jobs on (redis://…); default an in-process Redis")
	f.BoolVar(&o.keepDB, "keep-db", false, "keep the temporary SQLite file and print its path")
	f.StringVar(&o.card, "card", defaultBenchCard, "card file to play")
	f.StringVar(&o.profile, "profile", "", "write CPU, block and mutex profiles of the turns to this directory")
	f.IntVar(&o.seedPerceptions, "seed-perceptions", 0, "seed the character with this many perceptions first (recall over a long story)")
	return cmd
}

// benchCard loads the card at path; when no --card was given and the
// default file is not there, it returns the built-in card.
func benchCard(path string, given bool) (cards.Card, string, error) {
	card, err := cards.LoadCard(path)
	if err == nil {
		return card, path, nil
	}
	if !given && errors.Is(err, os.ErrNotExist) {
		return builtinBenchCard(), "built-in", nil
	}
	return cards.Card{}, "", err
}

func builtinBenchCard() cards.Card {
	return cards.Card{
		ID:          "bench-keeper",
		Name:        "Maren",
		Language:    "en",
		Description: "Maren keeps the lighthouse on Gull Rock, two hours by boat from the harbour town of Weyport. She has tended the light alone since her brother was lost at sea.",
		Personality: "Dry, patient, observant. Short sentences, long silences. Kind in deeds rather than words.",
		Scenario:    "A storm has driven {{user}}'s boat onto the rocks below the lighthouse; Maren has sat them by the stove.",
		FirstMes:    "*The kettle rattles on the stove. Maren sets a chipped mug in front of you.* \"Drink that. It's only tea, but it's hot. Who are you running from?\"",
	}
}

// benchRun is one bench run's moving parts.
type benchRun struct {
	o      benchOptions
	app    *app
	fake   *openaitest.Server
	scribe *memorytest.Scribe
	// chatRequests counts the chat turns that reached the fake model.
	chatRequests atomic.Int64
	// reflections and beliefChecks count the side calls the scribe fake
	// does not (it answers the memory jobs' other kinds).
	reflections, beliefChecks atomic.Int64
	// firstFailure is what the first failed turn said.
	firstFailure string
	// times holds the turns' pipeline times and slot waits, in histograms.
	times turnTimes
	// The steady state starts when every channel has played its opening
	// turn.
	steadyStart   time.Time
	steadyWall    time.Duration
	steadyReplies int64
	// reuse follows each channel's prompts from turn to turn.
	reuse prefixReuse
	// tag keeps this run's channels apart from an earlier run's in a reused
	// database.
	tag string
}

// runBench runs the benchmark. It returns the results whenever it measured
// something, with an error when turns failed or went unstored.
func runBench(ctx context.Context, cfg config.Config, o benchOptions, card cards.Card, log *slog.Logger) (*benchResult, error) {
	r := &benchRun{o: o, scribe: &memorytest.Scribe{}, tag: strconv.FormatInt(time.Now().UnixNano(), 36)}
	r.fake = openaitest.Start()
	defer r.fake.Close()
	r.fake.SetRecording(false)
	r.fake.SetPromptTokenCounter(memory.EstimateTokens)
	r.scribe.Next = func(req openaitest.Request) openaitest.Answer {
		// Reflection and its belief checks are side traffic the worker
		// runs between turns: answered by the contract, as a faithful
		// character would, not as a roleplay turn (which they would fail,
		// and be retried, and be counted as turns).
		switch {
		case memorytest.IsReflection(req):
			r.reflections.Add(1)
			return openaitest.Answer{Text: memorytest.FaithfulReflection(req)}
		case memorytest.IsBeliefCheck(req):
			r.beliefChecks.Add(1)
			return openaitest.Answer{Text: `{"compatible": true, "against": []}`}
		}
		r.chatRequests.Add(1)
		r.reuse.observe(req.Messages)
		a := openaitest.DefaultResponder(req)
		a.Latency = o.latency
		return a
	}
	r.fake.SetResponder(r.scribe.Respond)

	dsn, sqlitePath := o.dsn, ""
	if dsn == "" {
		dir, err := os.MkdirTemp("", "troupe-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: temporary database: %w", err)
		}
		sqlitePath = filepath.Join(dir, "bench.db")
		dsn = "sqlite://" + sqlitePath
		if !o.keepDB {
			defer os.RemoveAll(dir)
		}
	}
	cfg.Database.DSN = config.Secret(dsn)
	cfg.Redis.URL = config.Secret(o.redis)
	cfg.Model.BaseURL, cfg.Model.APIKey = r.fake.URL(), "bench"
	cfg.Scribe.BaseURL, cfg.Scribe.APIKey = r.fake.URL(), "bench"
	// The per-user rate limit would throttle the load itself.
	cfg.Limits.RatePerMinute = 0

	lib, err := cards.NewLibrary([]cards.Card{card}, "")
	if err != nil {
		return nil, err
	}
	if r.app, err = openApp(ctx, cfg, log, lib, &r.times); err != nil {
		return nil, err
	}
	defer r.app.Close()

	res := &benchResult{
		Database: r.app.store.Dialect(), Redis: "redis",
		Channels: o.channels, TurnsPerChannel: o.turns, Turns: o.channels * o.turns,
		ModelLatencyMS: ms(o.latency), ConcurrentTurns: r.app.pipeline.ConcurrentTurns(),
	}
	if r.app.redis.Embedded() {
		res.Redis = "embedded"
	}
	if o.keepDB {
		res.SQLitePath = sqlitePath
	}

	if o.seedPerceptions > 0 {
		space := bot.ChannelRef{Platform: "bench", SpaceKind: bot.SpaceLocal, SpaceID: "bench"}.Space()
		if err := r.app.store.SeedRecord(ctx, models.SeedSpec{SpaceID: space, Character: card.Name, ChatID: models.NewID(),
			N: o.seedPerceptions, Seed: 1}); err != nil {
			return nil, err
		}
		if err := r.app.store.SettleLoad(ctx); err != nil {
			return nil, err
		}
		// What the load left in the page cache is written out now, not
		// under the turns: traced on PostgreSQL after the checkpoint,
		// single commits still waited 20–120 ms for the disk in the run's
		// first half minute.
		syncDisks()
	}
	g, gctx := errgroup.WithContext(ctx)
	workerCtx, stopWorker := context.WithCancel(gctx)
	defer stopWorker()
	w := r.app.worker()
	g.Go(func() error { return w.Run(workerCtx) })

	measureErr := r.measure(gctx, res)
	stopWorker()
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if measureErr != nil {
		return nil, measureErr
	}
	res.PeakRSSMiB, res.PeakRSSSource = peakRSS()
	return res, r.verdict(res)
}

// measure drives the turns, lets the worker catch up and reads back what
// was stored.
func (r *benchRun) measure(ctx context.Context, res *benchResult) error {
	stopProfile, err := startProfiles(r.o.profile)
	if err != nil {
		return err
	}
	stmtStart := r.app.store.Statements()
	start, cpuStart := time.Now(), processCPU()
	replies, err := r.drive(ctx)
	wall, cpu := time.Since(start), processCPU()-cpuStart
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	res.Replies = replies
	res.FailedTurns = res.Turns - replies
	res.FirstFailure = r.firstFailure
	res.WallSeconds = wall.Seconds()
	res.TurnsPerSecond = float64(replies) / wall.Seconds()
	if replies > 0 {
		res.CPUMSPerTurn = ms(cpu) / float64(replies)
	}
	r.times.mu.Lock()
	res.PipelineP50MS, res.PipelineP99MS, res.PipelineMaxMS = r.times.pipeline.summary()
	res.SteadyP50MS, res.SteadyP99MS, res.SteadyMaxMS = r.times.steadyPipeline.summary()
	res.QueueP50MS, res.QueueP99MS, _ = r.times.wait.summary()
	res.SteadyQueueP50, res.SteadyQueueP99, _ = r.times.steadyWait.summary()
	res.Recalls = maps.Clone(r.times.recalls)
	r.times.mu.Unlock()
	res.PrefixReuseMedian, res.PrefixReusePairs = r.reuse.median()
	if r.steadyReplies > 0 {
		res.SteadyTurnsPerSecond = float64(r.steadyReplies) / r.steadyWall.Seconds()
	}

	drainStart := time.Now()
	if err := r.app.queue.Drain(ctx, 2*time.Minute); err != nil {
		r.app.log.Warn("bench: memory jobs not finished", "err", err)
	}
	res.JobsDrainSeconds = time.Since(drainStart).Seconds()
	res.TurnsPerSecondDrained = float64(replies) / (wall.Seconds() + res.JobsDrainSeconds)
	res.ChatRequests = r.chatRequests.Load()
	for _, kind := range []string{"summary", "recap", "consolidate"} {
		res.ScribeRequests += r.scribe.Count(kind)
	}
	res.SideRequests = map[string]int{"summary": r.scribe.Count("summary"), "recap": r.scribe.Count("recap"),
		"consolidate": r.scribe.Count("consolidate"), "record": r.scribe.Count("record"),
		"reflect": int(r.reflections.Load()), "belief_check": int(r.beliefChecks.Load())}
	if replies > 0 {
		st := r.app.store.Statements().Sub(stmtStart)
		turn, jobs := st.RoundTrips()
		n := float64(replies)
		res.StatementsPerTurn, res.JobStatementsPerTurn = float64(st.Turn)/n, float64(st.Background)/n
		res.RoundTripsPerTurn, res.JobRoundTripsPerTurn = float64(turn)/n, float64(jobs)/n
	}
	return r.readBack(ctx, res)
}

// drive plays every channel's turns, one goroutine per channel, and returns
// how many turns were answered. Every channel's opening turn (which creates
// its channel and chat rows) finishes before any channel plays its second,
// so that the steady-state figures leave the openings out.
func (r *benchRun) drive(ctx context.Context) (int, error) {
	var (
		wg, openings sync.WaitGroup
		replies      atomic.Int64
		failMu       sync.Mutex
		firstFailure string
	)
	opened := make(chan struct{})
	openings.Add(r.o.channels)
	for i := range r.o.channels {
		wg.Go(func() {
			opening := sync.OnceFunc(openings.Done)
			defer opening()
			ref := bot.ChannelRef{Platform: "bench", ID: fmt.Sprintf("%s-%d", r.tag, i), SpaceKind: bot.SpaceLocal, SpaceID: "bench"}
			sink := &benchSink{}
			// Spread the channels' turns over one model latency, so that
			// they arrive as a stream rather than in waves of C.
			stagger := r.o.latency * time.Duration(i) / time.Duration(r.o.channels)
			for t := range r.o.turns {
				if t == 1 {
					opening()
					select {
					case <-opened:
					case <-ctx.Done():
						return
					}
				}
				if t <= 1 && !sleepCtx(ctx, stagger) {
					return
				}
				in := bot.Inbound{Channel: ref, AuthorID: fmt.Sprint("bench-", i), AuthorName: "Ada", MessageID: fmt.Sprintf("%d-%d", i, t),
					Text:     fmt.Sprintf("Beat %d [%d]: I climb the stair, look at the sea and ask about the light and the brother who was lost.", t+1, i),
					Received: time.Now()}
				before := *sink
				err := r.app.pipeline.Handle(ctx, in, sink)
				if err == nil && sink.finished > before.finished && sink.notices == before.notices {
					replies.Add(1)
					continue
				}
				why := sink.lastNotice
				if err != nil {
					why = err.Error()
				} else if why == "" {
					why = "no reply and no notice"
				}
				failMu.Lock()
				if firstFailure == "" {
					firstFailure = why
				}
				failMu.Unlock()
			}
		})
	}
	openings.Wait()
	r.times.steady()
	r.steadyStart, r.steadyReplies = time.Now(), replies.Load()
	close(opened)
	wg.Wait()
	r.steadyWall, r.steadyReplies = time.Since(r.steadyStart), replies.Load()-r.steadyReplies
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("bench: interrupted: %w", err)
	}
	r.firstFailure = firstFailure
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := r.app.pipeline.Close(sctx); err != nil {
		return 0, err
	}
	return int(replies.Load()), nil
}

// sleepCtx waits d or until ctx is done; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// readBack counts what this run stored and the prompt tokens of each
// channel's first and last reply.
func (r *benchRun) readBack(ctx context.Context, res *benchResult) error {
	db := r.app.store.DB().WithContext(ctx)
	chats := db.Model(&models.Chat{}).Select("id").Where("channel_id LIKE ?", "bench:"+r.tag+"-%")
	if err := db.Model(&models.Message{}).Where("chat_id IN (?)", chats).Count(&res.MessagesStored).Error; err != nil {
		return fmt.Errorf("bench: count messages: %w", err)
	}
	if err := db.Model(&models.Summary{}).Where("chat_id IN (?)", chats).Count(&res.SummariesStored).Error; err != nil {
		return fmt.Errorf("bench: count summaries: %w", err)
	}
	var rows []struct {
		ChatID       string
		PromptTokens int
	}
	err := db.Model(&models.Message{}).Select("chat_id, prompt_tokens").
		Where("chat_id IN (?) AND role = ? AND prompt_tokens > 0", chats, memory.RoleAssistant).
		Order("id").Scan(&rows).Error
	if err != nil {
		return fmt.Errorf("bench: read prompt tokens: %w", err)
	}
	type span struct{ first, last int }
	per := map[string]*span{}
	for _, row := range rows {
		if s, ok := per[row.ChatID]; ok {
			s.last = row.PromptTokens
		} else {
			per[row.ChatID] = &span{row.PromptTokens, row.PromptTokens}
		}
	}
	for _, s := range per {
		res.PromptTokensFirst += float64(s.first)
		res.PromptTokensLast += float64(s.last)
	}
	if n := float64(len(per)); n > 0 {
		res.PromptTokensFirst /= n
		res.PromptTokensLast /= n
	}
	return nil
}

// verdict fails a run whose turns did not all get answered and stored.
func (r *benchRun) verdict(res *benchResult) error {
	var errs []error
	if res.FailedTurns > 0 {
		errs = append(errs, fmt.Errorf("bench: %d of %d turns failed", res.FailedTurns, res.Turns))
	}
	if want := int64(2 * res.Turns); res.MessagesStored < want {
		errs = append(errs, fmt.Errorf("bench: %d messages stored, want at least %d", res.MessagesStored, want))
	}
	return errors.Join(errs...)
}

// benchSink counts what the pipeline writes to one channel. Turns within a
// channel are sequential, so it needs no lock.
type benchSink struct {
	finished   int
	notices    int
	lastNotice string
}

var _ bot.Sink = (*benchSink)(nil)

func (*benchSink) Typing(context.Context)               {}
func (*benchSink) Update(context.Context, string) error { return nil }
func (s *benchSink) Finish(context.Context, string) error {
	s.finished++
	return nil
}
func (s *benchSink) Notice(_ context.Context, text string) error {
	s.notices++
	s.lastNotice = text
	return nil
}

// peakRSS returns the process's peak resident set in MiB, from VmHWM in
// /proc/self/status, or else the memory the Go runtime obtained from the
// system.
func peakRSS() (float64, string) {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
			if !ok {
				continue
			}
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024, "VmHWM"
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.Sys) / (1 << 20), "runtime.MemStats.Sys"
}

// startProfiles starts a CPU profile and block and mutex sampling when dir
// is set; the returned function writes the profiles to dir.
func startProfiles(dir string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	runtime.SetBlockProfileRate(int(time.Microsecond))
	runtime.SetMutexProfileFraction(5)
	return func() error {
		pprof.StopCPUProfile()
		errs := []error{cpu.Close()}
		for _, name := range []string{"block", "mutex", "heap"} {
			f, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, pprof.Lookup(name).WriteTo(f, 0), f.Close())
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("bench: profile: %w", err)
		}
		return nil
	}, nil
}

// processCPU returns the user and system time the process has used, from
// /proc/self/stat (in clock ticks of 10 ms), or 0 where that is not there.
func processCPU() time.Duration {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it start at
	// field 3 (state), so utime and stime (fields 14 and 15) are 11 and 12.
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// writeBench prints the results as a table, and as JSON to jsonPath when
// set. With --json - the JSON goes to stdout and the table to stderr.
func (c *cli) writeBench(res *benchResult, jsonPath string) error {
	table := c.stdout
	if jsonPath == "-" {
		table = c.stderr
	}
	if err := printBench(table, res); err != nil {
		return err
	}
	if jsonPath == "" {
		return nil
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if jsonPath == "-" {
		_, err = c.stdout.Write(data)
		return err
	}
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return fmt.Errorf("bench: write results: %w", err)
	}
	return nil
}

func printBench(w io.Writer, r *benchResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "troupe bench\t%d channels × %d turns, model latency %s\n", r.Channels, r.TurnsPerChannel, time.Duration(r.ModelLatencyMS*float64(time.Millisecond)))
	redis := "redis"
	if r.Redis == "embedded" {
		redis = "embedded redis"
	}
	fmt.Fprintf(tw, "backends\t%s + %s\n", r.Database, redis)
	fmt.Fprintf(tw, "card\t%s\n", r.Card)
	fmt.Fprintf(tw, "turns\t%d (%d answered, %d failed)\n", r.Turns, r.Replies, r.FailedTurns)
	if r.FirstFailure != "" {
		fmt.Fprintf(tw, "first failure\t%s\n", r.FirstFailure)
	}
	fmt.Fprintf(tw, "wall time\t%.2f s\n", r.WallSeconds)
	fmt.Fprintf(tw, "turns per second\t%.1f\n", r.TurnsPerSecond)
	fmt.Fprintf(tw, "pipeline p50 / p99 / max\t%.2f / %.2f / %.2f ms (model time excluded)\n", r.PipelineP50MS, r.PipelineP99MS, r.PipelineMaxMS)
	if r.TurnsPerChannel > 1 {
		fmt.Fprintf(tw, "after the openings\t%.1f turns/s; pipeline %.2f / %.2f / %.2f ms\n", r.SteadyTurnsPerSecond, r.SteadyP50MS, r.SteadyP99MS, r.SteadyMaxMS)
	}
	fmt.Fprintf(tw, "waiting for a turn slot\tp50 / p99 %.2f / %.2f ms (%.2f / %.2f after the openings; %d slots)\n", r.QueueP50MS, r.QueueP99MS, r.SteadyQueueP50, r.SteadyQueueP99, r.ConcurrentTurns)
	fmt.Fprintf(tw, "process CPU per turn\t%.2f ms (fake model included)\n", r.CPUMSPerTurn)
	fmt.Fprintf(tw, "prompt tokens per turn\t%.0f at the start, %.0f at the end\n", r.PromptTokensFirst, r.PromptTokensLast)
	fmt.Fprintf(tw, "prompt prefix reuse\tmedian %.3f turn to turn (%d pairs)\n", r.PrefixReuseMedian, r.PrefixReusePairs)
	fmt.Fprintf(tw, "messages stored\t%d (summaries %d)\n", r.MessagesStored, r.SummariesStored)
	fmt.Fprintf(tw, "model requests\t%d chat, %d scribe (jobs drained in %.2f s)\n", r.ChatRequests, r.ScribeRequests, r.JobsDrainSeconds)
	fmt.Fprintf(tw, "side-model calls\tsummary %d, recap %d, consolidate %d, record %d, reflect %d, belief check %d\n",
		r.SideRequests["summary"], r.SideRequests["recap"], r.SideRequests["consolidate"], r.SideRequests["record"], r.SideRequests["reflect"], r.SideRequests["belief_check"])
	if len(r.Recalls) > 0 {
		fmt.Fprintf(tw, "recall\tfull %d; under load: fewer candidates %d, cached ranking %d, late %d; failed %d\n",
			r.Recalls[bot.RecallFull], r.Recalls[bot.RecallFewer], r.Recalls[bot.RecallCached], r.Recalls[bot.RecallLate], r.Recalls[bot.RecallFailed])
	}
	fmt.Fprintf(tw, "turns per second, drain included\t%.1f\n", r.TurnsPerSecondDrained)
	fmt.Fprintf(tw, "statements per turn\t%.1f in the turn, %.1f in memory jobs (round trips on PostgreSQL: %.1f and %.1f)\n",
		r.StatementsPerTurn, r.JobStatementsPerTurn, r.RoundTripsPerTurn, r.JobRoundTripsPerTurn)
	fmt.Fprintf(tw, "peak RSS\t%.1f MiB (%s)\n", r.PeakRSSMiB, r.PeakRSSSource)
	if r.SQLitePath != "" {
		fmt.Fprintf(tw, "database kept\t%s\n", r.SQLitePath)
	}
	return tw.Flush()
}
