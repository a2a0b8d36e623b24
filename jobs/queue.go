package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"troupe/memory"
)

// Task types: "memory:" and the memory job's kind, which the worker's
// lock key (memory.JobLockKey) is built from.
const (
	TypeCompact     = typePrefix + memory.KindCompact
	TypeRecap       = typePrefix + memory.KindRecap
	TypeConsolidate = typePrefix + memory.KindConsolidate
	TypeRecord      = typePrefix + memory.KindRecord
	TypeReflect     = typePrefix + memory.KindReflect
	TypeEmbed       = typePrefix + memory.KindEmbed
	TypeReorganize  = typePrefix + memory.KindReorganize
)

const typePrefix = "memory:"

// Queue names: urgent work (an overflowing prompt, /new) goes first.
const (
	QueueUrgent  = "urgent"
	QueueDefault = "default"
)

// ChatPayload is the payload of per-chat jobs: only keys.
type ChatPayload struct {
	ChatID string `json:"chat_id"`
	// Urgent compactions run with the manual minimum: a prompt overflowed.
	Urgent bool `json:"urgent,omitempty"`
	// Now runs a recap without waiting for the chat to go idle.
	Now bool `json:"now,omitempty"`
}

// SpacePayload is the payload of per-(card, space) jobs.
type SpacePayload struct {
	CardID  string `json:"card_id"`
	SpaceID string `json:"space_id"`
	// Now: a person changed the memory's input (a hand edit, /forget, a
	// deleted recap); the run does not wait out earlier failures' backoff.
	Now bool `json:"now,omitempty"`
}

// Queue enqueues memory jobs.
type Queue struct {
	// Now is the clock that ages the idle recap tasks made sure of
	// (RecapWhenIdle); nil is time.Now. Set it before the first use.
	Now func() time.Time

	client *asynq.Client
	insp   *asynq.Inspector
	log    *slog.Logger
	// idleArmed remembers when this process last made sure of each chat's
	// idle recap task, so that a busy chat's turns skip the round trip.
	idleMu    sync.Mutex
	idleArmed map[string]time.Time
}

// NewQueue returns a queue on r.
func NewQueue(r *Redis, log *slog.Logger) *Queue {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Queue{
		client: asynq.NewClientFromRedisClient(r.Client),
		insp:   asynq.NewInspectorFromRedisClient(r.Client),
		log:    log.With("component", "jobs"),

		idleArmed: map[string]time.Time{},
	}
}

func taskID(kind, key string) string { return kind + ":" + key }

// nextSuffix names a key's follow-up task: the one enqueued while the key's
// task runs.
const nextSuffix = "#next"

// enqueue adds a task for key to queue qn unless the key's work is already
// queued. A task's id is fixed per key, so a task of that id settles what an
// enqueue means: one waiting or set to retry is the same work already queued
// (with runNow, one waiting to retry runs at once: its input changed); an
// archived or completed one is a dead record that would block the key for
// as long as Redis keeps it, so it is deleted and replaced. A running one
// may have read its input before the change that asks again, so a
// follow-up task (the id with nextSuffix) is queued behind it: the key's
// lock keeps it from running until the first is done, and it is itself
// the work already queued for every later ask while it waits. A sweep's ask
// carries no new input and queues none.
func (q *Queue) enqueue(ctx context.Context, typ, key, qn string, runNow bool, payload any, opts ...asynq.Option) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	id := taskID(typ, key)
	running, err := q.enqueueID(ctx, asynq.NewTask(typ, data), id, qn, runNow, opts)
	if err == nil && running && !isSweep(ctx) {
		_, err = q.enqueueID(ctx, asynq.NewTask(typ, data), id+nextSuffix, qn, runNow, opts)
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue %s %s: %w", typ, key, err)
	}
	return nil
}

type sweepKey struct{}

type notBeforeKey struct{}

// sweeping marks ctx as a sweep's: what it enqueues was owed before.
func sweeping(ctx context.Context) context.Context { return context.WithValue(ctx, sweepKey{}, true) }

func isSweep(ctx context.Context) bool { return ctx.Value(sweepKey{}) != nil }

// notBefore makes the tasks enqueued with ctx wait until at: the sweep's
// way of queuing a failing key's work for its next try.
func notBefore(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, notBeforeKey{}, at)
}

// enqueueID enqueues task under id unless a live task holds the id; running
// reports that the one holding it is running now.
func (q *Queue) enqueueID(ctx context.Context, task *asynq.Task, id, qn string, runNow bool, opts []asynq.Option) (running bool, err error) {
	opts = append([]asynq.Option{asynq.TaskID(id), asynq.Queue(qn), asynq.MaxRetry(8), asynq.Timeout(10 * time.Minute)}, opts...)
	if at, ok := ctx.Value(notBeforeKey{}).(time.Time); ok && time.Until(at) > 0 {
		opts = append(opts, asynq.ProcessAt(at))
	}
	// A second process replacing the same dead task makes the first enqueue
	// meet a live one: at most a few rounds.
	for range 3 {
		_, err = q.client.EnqueueContext(ctx, task, opts...)
		if !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
			return false, err
		}
		state, serr := q.settle(qn, id, runNow)
		if serr != nil {
			return false, serr
		}
		if state != asynq.TaskStateArchived {
			return state == asynq.TaskStateActive, nil
		}
	}
	return false, nil
}

// settle looks at the task id that an enqueue conflicted with and reports
// its state. A dead record (archived or completed) is deleted and reported
// as archived, as is a task gone meanwhile: enqueue again. A live task is
// left alone, except that runNow, or a task waiting for its failing key's
// next try, is moved to run at once (a failing key's task that is not due
// yet goes back to wait, without a model call).
func (q *Queue) settle(qn, id string, runNow bool) (asynq.TaskState, error) {
	info, err := q.insp.GetTaskInfo(qn, id)
	if errors.Is(err, asynq.ErrTaskNotFound) {
		return asynq.TaskStateArchived, nil
	}
	if err != nil {
		return 0, err
	}
	switch info.State {
	case asynq.TaskStateArchived, asynq.TaskStateCompleted:
		if err := q.insp.DeleteTask(qn, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			return 0, err
		}
		q.log.Info("replaced a dead task", "task_id", id, "state", info.State.String())
		return asynq.TaskStateArchived, nil
	case asynq.TaskStateRetry:
		// A task of a failing key waits for a time its key's record may
		// since have brought forward (a success, a new slot): run it now
		// and let the worker's whenDue hold it back again if it must.
		if runNow || failingTask(info.LastErr) {
			if err := q.insp.RunTask(qn, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				// It started meanwhile: queued all the same.
				q.log.Debug("run waiting task now", "task_id", id, "err", err)
			}
		}
	}
	return info.State, nil
}

// Compact enqueues a compaction of the chat.
func (q *Queue) Compact(ctx context.Context, chatID string, urgent bool) error {
	queue := QueueDefault
	if urgent {
		queue = QueueUrgent
	}
	return q.enqueue(ctx, TypeCompact, chatID, queue, false, ChatPayload{ChatID: chatID, Urgent: urgent})
}

// RecapWhenIdle makes sure the chat's recap runs once the chat has been idle
// for idle: one enqueue, a no-op while a recap task is already waiting. The
// task itself looks at the chat's last activity when it runs and waits
// again if the chat moved on (the debounce). A task this process made sure
// of less than idle/2 ago cannot have finished since (it waits for idle
// after the chat's last turn), so those turns cost no round trip at all.
func (q *Queue) RecapWhenIdle(ctx context.Context, chatID string, idle time.Duration) error {
	now := time.Now()
	if q.Now != nil {
		now = q.Now()
	}
	q.idleMu.Lock()
	armed, ok := q.idleArmed[chatID]
	q.idleMu.Unlock()
	if ok && now.Sub(armed) < idle/2 {
		return nil
	}
	if err := q.enqueue(ctx, TypeRecap, chatID, QueueDefault, false, ChatPayload{ChatID: chatID}, asynq.ProcessIn(idle), asynq.MaxRetry(maxIdleWaits)); err != nil {
		return err
	}
	q.idleMu.Lock()
	defer q.idleMu.Unlock()
	if len(q.idleArmed) >= maxIdleArmed {
		for id, t := range q.idleArmed {
			if now.Sub(t) >= idle/2 {
				delete(q.idleArmed, id)
			}
		}
	}
	q.idleArmed[chatID] = now
	return nil
}

// maxIdleArmed is how many chats idleArmed holds before it drops the
// expired ones.
const maxIdleArmed = 4096

// disarm forgets that chatID's idle recap task was made sure of.
func (q *Queue) disarm(chatID string) {
	q.idleMu.Lock()
	delete(q.idleArmed, chatID)
	q.idleMu.Unlock()
}

// RecapNow runs the chat's recap as soon as a worker is free (a chat that
// ended with /new), replacing one that waits for the chat to go idle.
func (q *Queue) RecapNow(ctx context.Context, chatID string) error {
	q.disarm(chatID)
	id := taskID(TypeRecap, chatID)
	for _, qn := range []string{QueueDefault, QueueUrgent} {
		for _, id := range []string{id, id + nextSuffix} {
			// Only a waiting task can be deleted; a running one is left alone.
			if err := q.insp.DeleteTask(qn, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) && !errors.Is(err, asynq.ErrQueueNotFound) {
				q.log.Debug("recap now: waiting task not deletable", "chat_id", chatID, "err", err)
			}
		}
	}
	return q.enqueue(ctx, TypeRecap, chatID, QueueUrgent, false, ChatPayload{ChatID: chatID, Now: true})
}

// maxIdleWaits bounds how often a recap task waits again for its chat to go
// idle; a chat busy for longer is found again by the sweeper.
const maxIdleWaits = 10000

// Record enqueues the chat's recorder. now (a /record, a recap that needs
// the record) moves one waiting out a failure's backoff to run at once.
func (q *Queue) Record(ctx context.Context, chatID string, now bool) error {
	queue := QueueDefault
	if now {
		queue = QueueUrgent
	}
	return q.enqueue(ctx, TypeRecord, chatID, queue, now, ChatPayload{ChatID: chatID, Now: now})
}

// Reflect enqueues the chat's reflection; now (a /reflect) runs it for every
// cast member with something new, at once.
func (q *Queue) Reflect(ctx context.Context, chatID string, now bool) error {
	queue := QueueDefault
	if now {
		queue = QueueUrgent
	}
	return q.enqueue(ctx, TypeReflect, chatID, queue, now, ChatPayload{ChatID: chatID, Now: now})
}

// Embed enqueues the writing of the vectors the chat's new perceptions (and
// its space's new beliefs) lack: once per chat however often it is asked.
func (q *Queue) Embed(ctx context.Context, chatID string) error {
	return q.enqueue(ctx, TypeEmbed, chatID, QueueDefault, false, ChatPayload{ChatID: chatID})
}

// Consolidate enqueues the consolidation of a card's memory in a space
// after a person changed its input (a hand edit, /forget, a deleted
// recap): it runs at once, even while the space waits out the backoff of
// earlier failures, in place of a task waiting for its next try.
func (q *Queue) Consolidate(ctx context.Context, cardID, spaceID string) error {
	key := cardID + "|" + spaceID
	for _, id := range []string{taskID(TypeConsolidate, key), taskID(TypeConsolidate, key) + nextSuffix} {
		// Only a waiting task can be deleted; a running one gets a follow-up.
		if err := q.insp.DeleteTask(QueueDefault, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) && !errors.Is(err, asynq.ErrQueueNotFound) {
			q.log.Debug("consolidate now: waiting task not deletable", "task_id", id, "err", err)
		}
	}
	return q.enqueue(ctx, TypeConsolidate, key, QueueDefault, false, SpacePayload{CardID: cardID, SpaceID: spaceID, Now: true})
}

// consolidate enqueues the consolidation a job or a sweep found owed (a
// recap written): a space whose consolidation keeps failing runs it at its
// next try, not at every recap.
func (q *Queue) consolidate(ctx context.Context, cardID, spaceID string) error {
	return q.enqueue(ctx, TypeConsolidate, cardID+"|"+spaceID, QueueDefault, false, SpacePayload{CardID: cardID, SpaceID: spaceID})
}

// Reorganize enqueues the reorganize of a card's memory in a space, owed
// after enough writes or at night; a failing one keeps its backoff.
func (q *Queue) Reorganize(ctx context.Context, cardID, spaceID string) error {
	return q.enqueue(ctx, TypeReorganize, cardID+"|"+spaceID, QueueDefault, false, SpacePayload{CardID: cardID, SpaceID: spaceID})
}

// dropDead deletes the archived and completed tasks of troupe's queues: a
// task archived behind the worker's back (a lease that expired in a crash)
// keeps its error text in Redis, where /forget does not look.
func (q *Queue) dropDead() (int, error) {
	queues, err := q.insp.Queues()
	if err != nil {
		return 0, fmt.Errorf("jobs: drop dead tasks: %w", err)
	}
	n := 0
	var errs []error
	for _, qn := range queues {
		a, err := q.insp.DeleteAllArchivedTasks(qn)
		n += a
		errs = append(errs, err)
		c, err := q.insp.DeleteAllCompletedTasks(qn)
		n += c
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("jobs: drop dead tasks: %w", err)
	}
	return n, nil
}

// Depth counts the tasks waiting, running or waiting to retry, and the age
// of the oldest waiting one.
func (q *Queue) Depth(ctx context.Context) (int, time.Duration, error) {
	total := 0
	var oldest time.Duration
	queues, err := q.insp.Queues()
	if err != nil {
		return 0, 0, fmt.Errorf("jobs: list queues: %w", err)
	}
	for _, qn := range queues {
		info, err := q.insp.GetQueueInfo(qn)
		if err != nil {
			return 0, 0, fmt.Errorf("jobs: queue info: %w", err)
		}
		total += info.Pending + info.Active + info.Retry
		if info.Latency > oldest {
			oldest = info.Latency
		}
	}
	return total, oldest, nil
}

// Drain waits until no job is waiting or running and none is set to retry
// before timeout, up to timeout. A job waiting out the backoff of its
// failures is owed work, not work in flight: it runs later, and a drain
// does not wait for it.
func (q *Queue) Drain(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	// The queues are read one after another, so a job that enqueues its
	// follow-up on a queue already read (a recap its consolidation) can
	// make one reading see nothing owed: only two empty readings in a row,
	// a poll apart, mean drained.
	empty := 0
	for {
		n, err := q.inFlight(deadline)
		if err != nil {
			return err
		}
		if n == 0 {
			if empty++; empty == 2 {
				return nil
			}
		} else {
			empty = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jobs: %d jobs still owed after %s; they run on the next start", n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// inFlight counts the tasks waiting or running, and those set to retry
// before deadline.
func (q *Queue) inFlight(deadline time.Time) (int, error) {
	queues, err := q.insp.Queues()
	if err != nil {
		return 0, fmt.Errorf("jobs: list queues: %w", err)
	}
	total := 0
	for _, qn := range queues {
		info, err := q.insp.GetQueueInfo(qn)
		if err != nil {
			return 0, fmt.Errorf("jobs: queue info: %w", err)
		}
		total += info.Pending + info.Active
		if info.Retry == 0 {
			continue
		}
		// Listed soonest first.
		retry, err := q.insp.ListRetryTasks(qn, asynq.PageSize(100))
		if err != nil {
			return 0, fmt.Errorf("jobs: list retries: %w", err)
		}
		for _, t := range retry {
			// A failing key's task waits for its next try: owed work,
			// not work in flight.
			if t.NextProcessAt.Before(deadline) && !failingTask(t.LastErr) {
				total++
			}
		}
	}
	return total, nil
}

// Owed counts the jobs waiting, running or set to retry, by kind
// (compact, recap, consolidate, record, reflect, embed): what a drain is
// still finishing, for a person waiting on it.
func (q *Queue) Owed() (map[string]int, error) {
	queues, err := q.insp.Queues()
	if err != nil {
		return nil, fmt.Errorf("jobs: list queues: %w", err)
	}
	out := map[string]int{}
	for _, qn := range queues {
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){q.insp.ListPendingTasks, q.insp.ListActiveTasks, q.insp.ListRetryTasks} {
			ts, err := list(qn, asynq.PageSize(100))
			if err != nil {
				return nil, fmt.Errorf("jobs: list tasks: %w", err)
			}
			for _, t := range ts {
				out[strings.TrimPrefix(t.Type, typePrefix)]++
			}
		}
	}
	return out, nil
}
