package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"troupe/memory"
	"troupe/models"
)

func (w *Worker) handleCompact(ctx context.Context, t *asynq.Task) error {
	var p ChatPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ChatID == "" {
		return fmt.Errorf("jobs: bad compact payload: %w", asynq.SkipRetry)
	}
	// A long backlog (an imported story, a queue that was down) may owe
	// several compactions; finish them while the job holds the chat.
	for i := 0; i < maxCompactionsPerJob; i++ {
		res, err := w.mem.Compact(ctx, p.ChatID, p.Urgent && i == 0)
		if err != nil || res.Outcome != memory.Written {
			return w.outcome(ctx, TypeCompact, p.ChatID, res, err)
		}
		if err := w.outcome(ctx, TypeCompact, p.ChatID, res, nil); err != nil {
			return err
		}
	}
	return nil
}

func (w *Worker) handleRecap(ctx context.Context, t *asynq.Task) error {
	var p ChatPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ChatID == "" {
		return fmt.Errorf("jobs: bad recap payload: %w", asynq.SkipRetry)
	}
	if !p.Now {
		chat, err := w.store.Chat(ctx, p.ChatID)
		if err == nil {
			if rest := w.opt.Now().Sub(chat.ActiveAt); rest < w.opt.IdleRecap {
				// The chat moved on since the task was set: wait again.
				return notIdle{wait: w.opt.IdleRecap - rest + 100*time.Millisecond}
			}
		}
	}
	if w.opt.Recorder {
		// The recap reads the ledger the recorder keeps: record first. A
		// failed run stays owed on its own key; the recap goes on.
		rres, rerr := w.mem.Record(ctx, p.ChatID)
		if rerr != nil {
			f := memory.FaultOf(rerr)
			w.log.Warn("record before recap", "chat_id", p.ChatID, "err_kind", f.Kind, "err", f.Detail)
		}
		// A chat gone idle gets no later turn: a run that made its
		// reflection due enqueues it here, or it would wait for the sweep.
		w.recorded(ctx, p.ChatID, rres, rerr)
	}
	res, err := w.mem.Recap(ctx, p.ChatID)
	if err == nil && res.Outcome == memory.Written {
		chat, cerr := w.store.Chat(ctx, p.ChatID)
		cast, kerr := w.store.Cast(ctx, p.ChatID, true)
		if cerr == nil && kerr == nil {
			// Each cast card keeps its own recap; a card whose recap did
			// not change finds nothing to merge. A failed enqueue is found
			// again by the sweeper.
			for _, m := range cast {
				if qerr := w.queue.consolidate(ctx, m.CardID, chat.SpaceID); qerr != nil {
					w.log.Warn("enqueue consolidation", "chat_id", p.ChatID, "card_id", m.CardID, "err", qerr)
				}
			}
		}
	}
	return w.outcome(ctx, TypeRecap, p.ChatID, res, err)
}

func (w *Worker) handleConsolidate(ctx context.Context, t *asynq.Task) error {
	var p SpacePayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.CardID == "" || p.SpaceID == "" {
		return fmt.Errorf("jobs: bad consolidate payload: %w", asynq.SkipRetry)
	}
	res, err := w.mem.Consolidate(ctx, p.CardID, p.SpaceID)
	if err == nil && res.Outcome == memory.Written {
		// The write may make a reorganize due; a failed enqueue waits for
		// the sweeper.
		if qerr := w.reorganizeIfDue(ctx, p.CardID, p.SpaceID); qerr != nil {
			w.log.Warn("enqueue reorganize", "card_id", p.CardID, "space_id", p.SpaceID, "err", qerr)
		}
	}
	return w.outcome(ctx, TypeConsolidate, p.CardID+"|"+p.SpaceID, res, err)
}

func (w *Worker) handleRecord(ctx context.Context, t *asynq.Task) error {
	var p ChatPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ChatID == "" {
		return fmt.Errorf("jobs: bad record payload: %w", asynq.SkipRetry)
	}
	res, err := w.mem.Record(ctx, p.ChatID)
	w.recorded(ctx, p.ChatID, res, err)
	return w.outcome(ctx, TypeRecord, p.ChatID, res, err)
}

// recorded follows a recorder run, wherever it ran (its own job, before a
// recap): new perceptions may make the chat's reflection due, busy chat or
// idle. The reflection job decides by reflection.* whether it is; a failed
// enqueue is found by the sweep.
func (w *Worker) recorded(ctx context.Context, chatID string, res memory.Result, err error) {
	if err != nil || res.Outcome != memory.Written || !w.opt.Reflect {
		return
	}
	if qerr := w.queue.Reflect(ctx, chatID, false); qerr != nil {
		w.log.Warn("enqueue reflection", "chat_id", chatID, "err", qerr)
	}
}

func (w *Worker) handleReflect(ctx context.Context, t *asynq.Task) error {
	var p ChatPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ChatID == "" {
		return fmt.Errorf("jobs: bad reflect payload: %w", asynq.SkipRetry)
	}
	r, ok := w.mem.(Reflector)
	if !ok {
		return nil
	}
	res, err := r.Reflect(ctx, p.ChatID, p.Now)

	return w.outcome(ctx, TypeReflect, p.ChatID, res, err)
}

func (w *Worker) handleEmbed(ctx context.Context, t *asynq.Task) error {
	var p ChatPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ChatID == "" {
		return fmt.Errorf("jobs: bad embed payload: %w", asynq.SkipRetry)
	}
	e, ok := w.mem.(Embedder)
	if !ok {
		return nil
	}
	res, err := e.Embed(ctx, p.ChatID)
	return w.outcome(ctx, TypeEmbed, p.ChatID, res, err)
}

// outcome turns a memory result into the task's result: success only with
// a product or a recorded skip. A failure, rejected output included, keeps
// the work owed and the task waiting out its key's backoff.
func (w *Worker) outcome(ctx context.Context, typ, key string, res memory.Result, err error) error {
	var rej *memory.RejectedError
	if w.opt.Observer != nil {
		kind := strings.TrimPrefix(typ, "memory:")
		switch {
		case errors.As(err, &rej):
			w.opt.Observer.JobObserved(kind, "rejected")
		case err != nil:
			w.opt.Observer.JobObserved(kind, "failed")
		default:
			w.opt.Observer.JobObserved(kind, string(res.Outcome))
		}
	}
	switch {
	case err != nil:
		return w.retryLater(ctx, typ, key)
	case res.Outcome == memory.Written && res.Product == "":
		return fmt.Errorf("jobs: %s %s reported written without a product: %w", typ, key, asynq.SkipRetry)
	}
	return nil
}

// retryLater sets the failed job's next try from the failures in a row the
// memory service recorded for its key (the job table, which every process
// sees), and records when that is. A task on its last retry ends instead
// (neverArchive); the next sweep comes within SweepInterval.
func (w *Worker) retryLater(ctx context.Context, typ, key string) error {
	kind := strings.TrimPrefix(typ, "memory:")
	failures := 1
	if rec, err := w.store.Job(ctx, kind, key); err == nil && rec.Outcome == models.OutcomeFailed {
		failures = max(rec.Failures, 1)
	}
	wait := backoff(failures, w.opt.FirstRetry, w.opt.SweepInterval)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	next := wait
	if retried >= maxRetry {
		next = w.opt.SweepInterval
	}
	if err := w.store.SetJobRetry(ctx, kind, key, time.Now().Add(next)); err != nil {
		w.log.Warn("record next try", "kind", kind, "key", key, "err", err)
	}
	w.log.Warn("memory job failed; it stays owed", "kind", kind, "key", key, "failures", failures, "next_try_in", next.Round(time.Second))
	return retryLater{typ: typ, key: key, failures: failures, wait: wait}
}
