package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// reorganizeOn reports whether the worker runs reorganizes.
func (w *Worker) reorganizeOn() bool {
	_, ok := w.mem.(Reorganizer)
	return ok && (w.opt.ReorganizeBatches > 0 || w.opt.ReorganizeTokens > 0 || w.opt.ReorganizeNight != nil)
}

// thresholds are the write counts that make a reorganize due; a count
// turned off (0) is one no pair reaches.
func (w *Worker) thresholds() (batches, tokens int) {
	batches, tokens = w.opt.ReorganizeBatches, w.opt.ReorganizeTokens
	if batches <= 0 {
		batches = 1 << 30
	}
	if tokens <= 0 {
		tokens = 1 << 30
	}
	return batches, tokens
}

// reorganizeIfDue enqueues a card and space's reorganize when its writes
// since the last one reach a threshold.
func (w *Worker) reorganizeIfDue(ctx context.Context, cardID, spaceID string) error {
	if !w.reorganizeOn() {
		return nil
	}
	st, err := w.store.Reorganize(ctx, cardID, spaceID)
	if err != nil {
		return err
	}
	batches, tokens := w.thresholds()
	if st.Batches < batches && st.Tokens < tokens {
		return nil
	}
	return w.queue.Reorganize(ctx, cardID, spaceID)
}

// sweepReorganize enqueues every reorganize owed: by the writes since the
// last one, or by the night.
func (w *Worker) sweepReorganize(ctx context.Context) (int, error) {
	if !w.reorganizeOn() {
		return 0, nil
	}
	var night time.Time
	if w.opt.ReorganizeNight != nil {
		night = w.opt.ReorganizeNight(time.Now())
	}
	batches, tokens := w.thresholds()
	keys, err := w.store.ReorganizeDue(ctx, batches, tokens, night)
	if err != nil {
		return 0, fmt.Errorf("jobs: sweep reorganize: %w", err)
	}
	for _, k := range keys {
		if err := w.queue.Reorganize(ctx, k.CardID, k.SpaceID); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

func (w *Worker) handleReorganize(ctx context.Context, t *asynq.Task) error {
	var p SpacePayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.CardID == "" || p.SpaceID == "" {
		return fmt.Errorf("jobs: bad reorganize payload: %w", asynq.SkipRetry)
	}
	r, ok := w.mem.(Reorganizer)
	if !ok {
		return nil
	}
	res, err := r.Reorganize(ctx, p.CardID, p.SpaceID)
	return w.outcome(ctx, TypeReorganize, p.CardID+"|"+p.SpaceID, res, err)
}
