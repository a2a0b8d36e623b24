package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
)

// Task types.
const (
	TypeCompact     = "memory:compact"
	TypeRecap       = "memory:recap"
	TypeConsolidate = "memory:consolidate"
)

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
}

// SpacePayload is the payload of per-(card, space) jobs.
type SpacePayload struct {
	CardID  string `json:"card_id"`
	SpaceID string `json:"space_id"`
}

// Queue enqueues memory jobs.
type Queue struct {
	client *asynq.Client
	insp   *asynq.Inspector
	log    *slog.Logger
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
	}
}

// Close releases the queue (not the Redis connection).
func (q *Queue) Close() error { return nil }

func taskID(kind, key string) string { return kind + ":" + key }

// enqueue adds a task unless one with the same id is already waiting or
// running: a duplicate is not an error.
func (q *Queue) enqueue(ctx context.Context, typ, key string, payload any, opts ...asynq.Option) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	opts = append([]asynq.Option{asynq.TaskID(taskID(typ, key)), asynq.MaxRetry(8), asynq.Timeout(10 * time.Minute)}, opts...)
	_, err = q.client.EnqueueContext(ctx, asynq.NewTask(typ, data), opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue %s %s: %w", typ, key, err)
	}
	return nil
}

// Compact enqueues a compaction of the chat.
func (q *Queue) Compact(ctx context.Context, chatID string, urgent bool) error {
	queue := QueueDefault
	if urgent {
		queue = QueueUrgent
	}
	return q.enqueue(ctx, TypeCompact, chatID, ChatPayload{ChatID: chatID, Urgent: urgent}, asynq.Queue(queue))
}

// Recap enqueues the chat's recap after delay. A recap already scheduled is
// pushed back (debounce): each new message restarts the idle timer.
func (q *Queue) Recap(ctx context.Context, chatID string, delay time.Duration) error {
	id := taskID(TypeRecap, chatID)
	queue := QueueDefault
	if delay <= 0 {
		queue = QueueUrgent
	}
	for _, qn := range []string{QueueDefault, QueueUrgent} {
		// Only a waiting task can be deleted; a running one is left alone.
		if err := q.insp.DeleteTask(qn, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) && !errors.Is(err, asynq.ErrQueueNotFound) {
			q.log.Debug("recap debounce: task not deletable", "chat_id", chatID, "err", err)
		}
	}
	return q.enqueue(ctx, TypeRecap, chatID, ChatPayload{ChatID: chatID}, asynq.ProcessIn(delay), asynq.Queue(queue))
}

// Consolidate enqueues the consolidation of a card's memory in a space.
func (q *Queue) Consolidate(ctx context.Context, cardID, spaceID string) error {
	return q.enqueue(ctx, TypeConsolidate, cardID+"|"+spaceID, SpacePayload{CardID: cardID, SpaceID: spaceID}, asynq.Queue(QueueDefault))
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

// Drain waits until no job is waiting, running or retrying, up to timeout.
func (q *Queue) Drain(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, _, err := q.Depth(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
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
