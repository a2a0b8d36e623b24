package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"troupe/memory"
	"troupe/models"
)

// Memory is the memory work the worker runs.
type Memory interface {
	Compact(ctx context.Context, chatID string, manual bool) (memory.Result, error)
	CompactionOwed(ctx context.Context, chat models.Chat) (bool, error)
	Recap(ctx context.Context, chatID string) (memory.Result, error)
	RecapOwed(ctx context.Context, chat models.Chat) (bool, error)
	Consolidate(ctx context.Context, cardID, spaceID string) (memory.Result, error)
	Record(ctx context.Context, chatID string) (memory.Result, error)
}

// Reflector is the optional part of Memory that runs a chat's reflection;
// manual runs it for every cast member with something new.
type Reflector interface {
	Reflect(ctx context.Context, chatID string, manual bool) (memory.Result, error)
	ReflectionOwed(ctx context.Context, chat models.Chat) (bool, error)
}

// Reorganizer is the optional part of Memory that reorganizes a card's
// memory in a space (seed 001).
type Reorganizer interface {
	Reorganize(ctx context.Context, cardID, spaceID string) (memory.Result, error)
}

// Embedder is the optional part of Memory that writes item vectors for
// recall (recall.embeddings).
type Embedder interface {
	Embed(ctx context.Context, chatID string) (memory.Result, error)
	EmbeddingOwed(ctx context.Context, chat models.Chat) (bool, error)
}

// WorkerOptions configures a Worker.
type WorkerOptions struct {
	Concurrency int
	// SweepInterval is how often owed work is re-derived; the sweeper also
	// runs once at start.
	SweepInterval time.Duration
	// SweepWindow bounds the sweep to chats active this recently.
	SweepWindow time.Duration
	// PollInterval is how often idle queues and delayed tasks are checked.
	PollInterval time.Duration
	// IdleRecap is how long a chat rests before its recap is owed.
	IdleRecap time.Duration
	// FirstRetry is how long a key waits after its first failure in a row
	// (default 20s); each further failure doubles it, up to SweepInterval.
	FirstRetry time.Duration
	// Observer is told each job's outcome; nil observes nothing.
	Observer Observer
	// Recorder: a recap first brings the chat's record up to date.
	Recorder bool
	// RecordBatch is recorder.batch: the sweeper owes a chat's recorder
	// run when this many recordable turns wait (with Recorder).
	RecordBatch int
	// Reflect: a recorder run that wrote enqueues the chat's reflection,
	// which decides by reflection.* whether it is due.
	Reflect bool
	// Embed: the sweeper owes the embedding job of a chat with items
	// lacking a vector (the memory service enqueues it after each recorder
	// run or reflection that wrote; memory.Service.UseVectors).
	Embed bool
	// ShutdownTimeout is how long Run, once its context is done, lets
	// running jobs finish before it cancels them (default 20s). A
	// cancelled job stays owed: the sweeper finds it again.
	ShutdownTimeout time.Duration
	// ReorganizeBatches and ReorganizeTokens: a card's memory in a space
	// owes a reorganize after this many writes, or tokens written, since
	// the last one (0: never for that reason). ReorganizeNight returns
	// the latest nightly reorganize time at or before now (zero: none).
	ReorganizeBatches, ReorganizeTokens int
	ReorganizeNight                     func(now time.Time) time.Time
	// TurnsActive reports whether this process's turns hold or wait for
	// a pipeline slot (bot.Pipeline.Active); while they do, memory jobs do
	// their own work one at a time, and wait for the scribe side by side
	// (see yieldToTurns). Nil: jobs never wait for turns.
	TurnsActive func() bool
	// Now is the clock a chat's rest and the sweep window are measured
	// on (default time.Now). Task delays and retries run on the wall
	// clock, as the queue in Redis does.
	Now func() time.Time
}

// Observer is told the outcome of each memory job: kind is "compact",
// "recap" or "consolidate"; outcome is "written", "skipped", "rejected"
// (the scribe's output failed validation twice) or "failed".
type Observer interface {
	JobObserved(kind, outcome string)
}

// Worker runs memory jobs from the queue and the periodic sweeper.
type Worker struct {
	srv   *asynq.Server
	mux   *asynq.ServeMux
	mem   Memory
	store *models.Store
	queue *Queue
	opt   WorkerOptions
	log   *slog.Logger
	locks *Locker
	// swept is closed once Run's first sweep has enqueued the work owed
	// at start (Swept).
	swept     chan struct{}
	sweptOnce sync.Once
	// lane is the one slot jobs take for their own work while turns are
	// active (laneHold); retake bounds a wait for it (laneRetake).
	lane   chan struct{}
	retake time.Duration
	// lastEnded is when the last job's handler returned (unix ns).
	lastEnded atomic.Int64
}

// LastJobEnded is when this worker's last job ended, successful or not;
// zero before its first. A drain that waits for the queue to read empty
// twice, a poll apart, ends after it: troupe bench counts the jobs' own
// time from it.
func (w *Worker) LastJobEnded() time.Time {
	if ns := w.lastEnded.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// noteEnd records when each job ends (LastJobEnded).
func (w *Worker) noteEnd(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		defer func() { w.lastEnded.Store(time.Now().UnixNano()) }()
		return next.ProcessTask(ctx, t)
	})
}

// Swept is closed once the worker's first sweep is done (or Run ended
// before it), so that a caller that drains the queue next, such as troupe
// chat at its end, does not find it empty before the owed work is in it.
func (w *Worker) Swept() <-chan struct{} { return w.swept }

// NewWorker returns a worker; Run starts it.
func NewWorker(r *Redis, q *Queue, mem Memory, store *models.Store, opt WorkerOptions, log *slog.Logger) *Worker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 4
	}
	if opt.SweepInterval <= 0 {
		opt.SweepInterval = 5 * time.Minute
	}
	if opt.SweepWindow <= 0 {
		opt.SweepWindow = 7 * 24 * time.Hour
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	if opt.IdleRecap <= 0 {
		opt.IdleRecap = 30 * time.Minute
	}
	if opt.FirstRetry <= 0 {
		opt.FirstRetry = 20 * time.Second
	}
	if opt.ShutdownTimeout <= 0 {
		opt.ShutdownTimeout = 20 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	log = log.With("component", "jobs")
	w := &Worker{mem: mem, store: store, queue: q, opt: opt, log: log, mux: asynq.NewServeMux(), locks: NewLocker(r), swept: make(chan struct{}),
		lane: make(chan struct{}, 1), retake: laneRetake}
	w.srv = asynq.NewServerFromRedisClient(r.Client, asynq.Config{
		Concurrency:              opt.Concurrency,
		Queues:                   map[string]int{QueueUrgent: 6, QueueDefault: 3},
		TaskCheckInterval:        opt.PollInterval / 4,
		DelayedTaskCheckInterval: opt.PollInterval,
		RetryDelayFunc:           w.retryDelay,
		Logger:                   asynqLogger{log},
		LogLevel:                 asynq.WarnLevel,
		ShutdownTimeout:          opt.ShutdownTimeout,
		IsFailure: func(err error) bool {
			var ni notIdle
			var rl retryLater
			return !errors.As(err, &ni) && !(errors.As(err, &rl) && rl.early)
		},
	})
	w.mux.Use(w.noteEnd, background, w.neverArchive, w.whenDue, w.yieldToTurns, w.exclusive)
	w.mux.HandleFunc(TypeCompact, w.handleCompact)
	w.mux.HandleFunc(TypeRecap, w.handleRecap)
	w.mux.HandleFunc(TypeConsolidate, w.handleConsolidate)
	w.mux.HandleFunc(TypeRecord, w.handleRecord)
	w.mux.HandleFunc(TypeReflect, w.handleReflect)
	w.mux.HandleFunc(TypeEmbed, w.handleEmbed)
	w.mux.HandleFunc(TypeReorganize, w.handleReorganize)
	return w
}

// background marks every job's context models.Background: on SQLite its
// writes give way to turns'.
func background(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		return next.ProcessTask(models.Background(ctx), t)
	})
}

// neverArchive ends a task that asynq would archive (a SkipRetry, or the
// last of its retries) by deleting it instead: an archived task keeps its
// id, so every later enqueue of its key would meet it, and keeps its error
// text in Redis for months. The work stays owed in the database; the next
// turn, recap, /forget, hand edit or sweep enqueues it again.
func (w *Worker) neverArchive(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		err := next.ProcessTask(ctx, t)
		if err == nil || errors.Is(err, asynq.RevokeTask) {
			return err
		}
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		if errors.Is(err, asynq.SkipRetry) || retried >= maxRetry {
			f := memory.FaultOf(err)
			w.log.Warn("job ended; its work stays owed for the next trigger", "type", t.Type(), "key", lockKey(t), "retries", retried, "err_kind", f.Kind, "err", f.Detail)
			return fmt.Errorf("jobs: %s %s ended: %w", t.Type(), lockKey(t), asynq.RevokeTask)
		}
		return err
	})
}

// whenDue holds back a task of a failing key until the next try its job
// record names, whichever process or restart queued it (a sweep, a turn, a
// recap's follow-up, a process that started after the failure): the
// record, in the database every process shares, is the one clock of a
// key's backoff, so a job that keeps failing costs one try per backoff
// step however often it is asked for. A task a person asked for (payload
// "now": /record, /reflect, /new, a hand edit, /forget) runs at once.
func (w *Worker) whenDue(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		var p struct {
			Now bool `json:"now"`
		}
		_ = json.Unmarshal(t.Payload(), &p)
		if p.Now || w.store == nil {
			return next.ProcessTask(ctx, t)
		}
		kind, key := strings.TrimPrefix(t.Type(), typePrefix), lockKey(t)
		rec, err := w.store.Job(ctx, kind, key)
		if err == nil && rec.Outcome == models.OutcomeFailed {
			if wait := time.Until(w.nextTry(rec)); wait > 0 {
				return retryLater{typ: t.Type(), key: key, failures: rec.Failures, wait: wait, early: true}
			}
		}
		return next.ProcessTask(ctx, t)
	})
}

// nextTry is when a failed job's key is tried again: the time its record
// names, and never before its backoff has passed since the failure (the
// record may not name one yet: the failure is recorded before its next try).
func (w *Worker) nextTry(rec models.JobRecord) time.Time {
	at := rec.UpdatedAt.Add(backoff(max(rec.Failures, 1), w.opt.FirstRetry, w.opt.SweepInterval))
	if rec.RetryAt != nil && rec.RetryAt.After(at) {
		at = *rec.RetryAt
	}
	return at
}

// exclusive runs a task only while it holds its key's lock, so no two
// processes ever work on the same chat's (or card and space's) memory at
// once, even when a person's /compact races a queued job. A busy key is
// retried later.
func (w *Worker) exclusive(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		// A GM's run-now command builds the same key (memory.JobLockKey).
		key := memory.JobLockKey(strings.TrimPrefix(t.Type(), typePrefix), lockKey(t))
		unlock, err := w.locks.TryLock(ctx, key)
		if err != nil {
			return fmt.Errorf("jobs: %s: %w", key, err)
		}
		defer unlock()
		return next.ProcessTask(ctx, t)
	})
}

// lockKey is the chat id or "card|space" a task is about.
func lockKey(t *asynq.Task) string {
	var p struct {
		ChatID  string `json:"chat_id"`
		CardID  string `json:"card_id"`
		SpaceID string `json:"space_id"`
	}
	_ = json.Unmarshal(t.Payload(), &p)
	if p.ChatID != "" {
		return p.ChatID
	}
	return p.CardID + "|" + p.SpaceID
}

// maxCompactionsPerJob bounds the compactions one job runs back to back.
const maxCompactionsPerJob = 8

// Run processes jobs and sweeps until ctx is done; it leaves unfinished
// jobs owed.
func (w *Worker) Run(ctx context.Context) error {
	markSwept := func() { w.sweptOnce.Do(func() { close(w.swept) }) }
	defer markSwept()
	if err := w.srv.Start(w.mux); err != nil {
		return fmt.Errorf("jobs: start worker: %w", err)
	}
	w.log.Info("worker started", "concurrency", w.opt.Concurrency)
	t := time.NewTicker(w.opt.SweepInterval)
	defer t.Stop()
	w.sweep(ctx)
	markSwept()
	for {
		select {
		case <-ctx.Done():
			w.srv.Shutdown()
			w.log.Info("worker stopped")
			return nil
		case <-t.C:
			w.sweep(ctx)
		}
	}
}

// Sweep re-derives owed work from the database and enqueues it, and
// writes the index terms left owed. Its writes give way to turns'.
func (w *Worker) Sweep(ctx context.Context) (int, error) {
	ctx = sweeping(models.Background(ctx))
	now := w.opt.Now()
	since := now.Add(-w.opt.SweepWindow).Unix()
	chats, err := w.store.ActiveChatsSince(ctx, since, 5000)
	if err != nil {
		return 0, fmt.Errorf("jobs: sweep: %w", err)
	}
	tries, err := w.nextTries(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	idleBefore := now.Add(-w.opt.IdleRecap)
	for _, c := range chats {
		owed, err := w.mem.CompactionOwed(ctx, c)
		if err != nil {
			return n, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
		}
		if owed {
			if err := w.queue.Compact(tries.at(ctx, memory.KindCompact, c.ID), c.ID, false); err != nil {
				return n, err
			}
			n++
		}
		if owed, err = w.recordOwed(ctx, c); err != nil {
			return n, err
		}
		if owed {
			if err := w.queue.Record(tries.at(ctx, memory.KindRecord, c.ID), c.ID, false); err != nil {
				return n, err
			}
			n++
		}
		if r, ok := w.mem.(Reflector); ok && w.opt.Reflect {
			if owed, err = r.ReflectionOwed(ctx, c); err != nil {
				return n, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
			}
			if owed {
				if err := w.queue.Reflect(tries.at(ctx, memory.KindReflect, c.ID), c.ID, false); err != nil {
					return n, err
				}
				n++
			}
		}
		if e, ok := w.mem.(Embedder); ok && w.opt.Embed {
			if owed, err = e.EmbeddingOwed(ctx, c); err != nil {
				return n, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
			}
			if owed {
				if err := w.queue.Embed(tries.at(ctx, memory.KindEmbed, c.ID), c.ID); err != nil {
					return n, err
				}
				n++
			}
		}
		if c.ActiveAt.After(idleBefore) {
			continue
		}
		if owed, err = w.mem.RecapOwed(ctx, c); err != nil {
			return n, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
		}
		if owed {
			if err := w.queue.RecapWhenIdle(tries.at(ctx, memory.KindRecap, c.ID), c.ID, 0); err != nil {
				return n, err
			}
			n++
		}
	}
	keys, err := w.store.OwedConsolidations(ctx)
	if err != nil {
		return n, fmt.Errorf("jobs: sweep consolidations: %w", err)
	}
	for _, k := range keys {
		// A failing consolidation keeps its backoff.
		key := models.MemoryJobKey(k.CardID, k.SpaceID)
		if err := w.queue.consolidate(tries.at(ctx, memory.KindConsolidate, key), k.CardID, k.SpaceID); err != nil {
			return n, err
		}
		n++
	}
	m, err := w.sweepReorganize(ctx)
	n += m
	if err != nil {
		return n, err
	}
	// Index terms a crash or an error left owed are written here: the
	// chat's next record install would, but it may never come.
	if chats, err := w.store.IndexOwed(ctx); err != nil {
		w.log.Warn("sweep: index terms stay owed", "chats", chats, "err", err)
	} else if chats > 0 {
		w.log.Info("sweep wrote owed index terms", "chats", chats)
	}
	return n, nil
}

// recordOwed reports whether recorder.batch recordable turns of the chat
// wait (the newest turn waits for a later user message and does not count),
// or the chat has ended with its last turn unrecorded: no later turn will
// fill a batch, and the turn is recordable now (its enqueue at the chat's
// end, or that run, may have failed).
func (w *Worker) recordOwed(ctx context.Context, c models.Chat) (bool, error) {
	if !w.opt.Recorder || w.opt.RecordBatch <= 0 {
		return false, nil
	}
	n, err := w.store.UnrecordedTurns(ctx, c.ID, w.opt.RecordBatch+1)
	if err != nil {
		return false, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
	}
	if n-1 >= w.opt.RecordBatch || n == 0 {
		return n > 0, nil
	}
	owed, err := w.store.EndedTurnOwed(ctx, c)
	if err != nil {
		return false, fmt.Errorf("jobs: sweep chat %s: %w", c.ID, err)
	}
	return owed, nil
}

func (w *Worker) sweep(ctx context.Context) {
	if dropped, err := w.queue.dropDead(); err != nil {
		w.log.Warn("sweep", "err", err)
	} else if dropped > 0 {
		w.log.Info("sweep deleted dead tasks", "tasks", dropped)
	}
	n, err := w.Sweep(ctx)
	if err != nil {
		w.log.Warn("sweep", "err", err)
		return
	}
	if n > 0 {
		w.log.Info("sweep enqueued owed work", "jobs", n)
	}
}

// asynqLogger routes asynq's logs to slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }
