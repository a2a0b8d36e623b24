package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/models"
	"troupe/prompt"
)

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
	r.fake.SetPromptTokenCounter(prompt.EstimateTokens)
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
	r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		a := r.scribe.Respond(req)
		if memorytest.Kind(req) != "" || memorytest.IsReflection(req) || memorytest.IsBeliefCheck(req) {
			a.Latency = o.scribeLatency
		}
		return a
	})

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
		ModelLatencyMS: ms(o.latency), ScribeLatencyMS: ms(o.scribeLatency), ConcurrentTurns: r.app.pipeline.ConcurrentTurns(),
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

	measureErr := r.measure(gctx, res, w)
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
func (r *benchRun) measure(ctx context.Context, res *benchResult, w *jobs.Worker) error {
	stopProfile, err := startProfiles(r.o.profile, "")
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

	stopProfile, err = startProfiles(r.o.profile, "drain-")
	if err != nil {
		return err
	}
	drainStart := time.Now()
	drainErr := r.app.queue.Drain(ctx, 2*time.Minute)
	res.JobsDrainSeconds = drainSeconds(drainStart, time.Now(), w.LastJobEnded(), drainErr)
	if drainErr != nil {
		r.app.log.Warn("bench: memory jobs not finished", "err", drainErr)
	}
	if err := stopProfile(); err != nil {
		return err
	}
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
				err := r.app.pipeline.Submit(ctx, bot.Event{In: in}, sink).Wait(ctx)
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
		Where("chat_id IN (?) AND role = ? AND prompt_tokens > 0", chats, prompt.RoleAssistant).
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

func (*benchSink) Typing(context.Context) {}

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

// drainSeconds is how long the memory jobs ran on after the turns: until
// the last of them ended. Drain itself returns only once the queue has
// read empty twice, a poll (100 ms) apart, so its own return came 100–200
// ms after the work did. When the drain failed (jobs still owed at its
// timeout) it is the whole wait.
func drainSeconds(start, returned, lastEnded time.Time, err error) float64 {
	if err != nil {
		return returned.Sub(start).Seconds()
	}
	if lastEnded.Before(start) {
		return 0
	}
	return lastEnded.Sub(start).Seconds()
}
