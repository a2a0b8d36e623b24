package bot

import (
	"context"
	"errors"
	"time"

	"troupe/memory"
	"troupe/models"
)

// addRecall gives the prompt the speaking character's recall block: what
// it remembers of its own perceptions and beliefs that bears on the new
// messages (memory.Recall). It runs under recall.timeout: past it, or on an
// error, the turn goes on without the block. Recalling counts: the picked
// items' recall counts (and, with recall.diagnostics, the inspector's
// record) are written after the prompt is built, off the turn's path.
// Nothing when recall or the recorder is off.
func (p *Pipeline) addRecall(ctx context.Context, cs chatState, br models.Branch, character string, m *memory.Material) {
	rc := p.opt.Recall
	if !rc.Enabled || !p.opt.Recorder.Enabled || len(br.Uncovered) == 0 {
		return
	}
	in := memory.RecallInput{Language: m.Language, SpaceID: cs.chat.SpaceID, Character: character, ChatID: cs.chat.ID,
		HeadID: br.Uncovered[len(br.Uncovered)-1].ID, InPrompt: make(map[string]bool, len(br.Uncovered))}
	for _, msg := range br.Uncovered {
		in.InPrompt[msg.ID] = true
	}
	for i := len(br.Uncovered) - 1; i >= 0 && br.Uncovered[i].Role == memory.RoleUser; i-- {
		in.New = append(in.New, br.Uncovered[i].Content)
	}
	timeout := rc.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := memory.RecallConfigFrom(rc, p.opt.MemoryConfig)
	cfg.Vectors, cfg.Rerank = p.opt.RecallVectors, p.opt.Reranker
	got, err := p.recall(rctx, cfg, in)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			p.log.Warn("recall over its time; the turn goes on without it", "chat_id", cs.chat.ID, "timeout", timeout)
		} else {
			p.log.Warn("recall", "chat_id", cs.chat.ID, "err", err)
		}
		return
	}
	m.Recall = got.Block
	for _, s := range got.Skipped {
		p.log.Warn("recall went on without a part", "chat_id", cs.chat.ID, "skipped", s)
	}
	done := models.RecallDone{Perceptions: got.Perceptions, Beliefs: got.Beliefs, Keep: rc.DiagnosticsTurns}
	if rc.Diagnostics {
		done.Diagnostic = &models.RecallDiagnostic{ChatID: cs.chat.ID, MessageID: in.HeadID, Character: character,
			Data: got.Report(character).JSON()}
	}
	if len(done.Perceptions)+len(done.Beliefs) == 0 && done.Diagnostic == nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.opt.Store.NoteRecall(wctx, done); err != nil {
			p.log.Warn("note recall", "chat_id", cs.chat.ID, "err", err)
		}
	}()
}

// recall runs memory.Recall, after p.opt.RecallDelay when a test holds it up;
// a context done before it returns wins.
func (p *Pipeline) recall(ctx context.Context, cfg memory.RecallConfig, in memory.RecallInput) (memory.Recalled, error) {
	type result struct {
		r   memory.Recalled
		err error
	}
	ch := make(chan result, 1)
	go func() {
		if p.opt.RecallDelay != nil {
			p.opt.RecallDelay(ctx)
		}
		r, err := memory.Recall(ctx, p.opt.Store, cfg, in)
		ch <- result{r, err}
	}()
	select {
	case res := <-ch:
		return res.r, res.err
	case <-ctx.Done():
		return memory.Recalled{}, ctx.Err()
	}
}
