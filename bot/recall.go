package bot

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

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
//
// With recall.kept_chars, the blocks earlier turns showed are sent again
// where they stood (keptRecalls), and the new block shows only what they
// do not: the block to keep for this turn is returned, for the pipeline to
// store with the reply.
func (p *Pipeline) addRecall(ctx context.Context, cs chatState, br models.Branch, character string, m *memory.Material) *keptBlock {
	rc := p.opt.Recall
	if !rc.Enabled || !p.opt.Recorder.Enabled || len(br.Uncovered) == 0 {
		return nil
	}
	in := memory.RecallInput{Language: m.Language, SpaceID: cs.chat.SpaceID, Character: character, ChatID: cs.chat.ID,
		HeadID: br.Uncovered[len(br.Uncovered)-1].ID, InPrompt: make(map[string]bool, len(br.Uncovered))}
	for _, msg := range br.Uncovered {
		in.InPrompt[msg.ID] = true
	}
	fresh := len(br.Uncovered)
	for ; fresh > 0 && br.Uncovered[fresh-1].Role == memory.RoleUser; fresh-- {
		in.New = append(in.New, br.Uncovered[fresh-1].Content)
	}
	if rc.KeptChars > 0 {
		in.Kept = p.keptRecalls(ctx, cs, br.Uncovered[:fresh], character, m)
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
		return nil
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
	var keep *keptBlock
	if rc.KeptChars > 0 && got.Block != "" && fresh < len(br.Uncovered) {
		keep = &keptBlock{block: models.RecallKept{MessageID: br.Uncovered[fresh].ID, Character: character, ChatID: cs.chat.ID, Text: got.Block},
			items: got.Shown}
	}
	if len(done.Perceptions)+len(done.Beliefs) == 0 && done.Diagnostic == nil {
		return keep
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
	return keep
}

// keptBlock is the recall block a turn showed, to keep once its reply is
// stored.
type keptBlock struct {
	block models.RecallKept
	items []string
}

// keptRecalls puts the recall blocks kept for character before the older
// messages back in their places in m's history and returns the ids of the
// items they show. They count from the oldest message on: when the next
// one would take them past recall.kept_chars, those before it are no longer
// sent, and the count starts again from it. So a block, once sent, stays in
// place turn after turn until the count is reset or compaction covers its
// message, and the prompt changes in one place at a time. A read that fails
// leaves them out.
func (p *Pipeline) keptRecalls(ctx context.Context, cs chatState, older []models.Message, character string, m *memory.Material) map[string]bool {
	if len(older) == 0 {
		return nil
	}
	ids := make([]string, len(older))
	for i, msg := range older {
		ids[i] = msg.ID
	}
	rows, err := p.opt.Store.KeptRecalls(ctx, cs.chat.ID, character, ids)
	if err != nil {
		p.log.Warn("kept recall", "chat_id", cs.chat.ID, "err", err)
		return nil
	}
	if len(rows) == 0 {
		return nil
	}
	byMsg := make(map[string]models.RecallKept, len(rows))
	for _, k := range rows {
		byMsg[k.MessageID] = k
	}
	var sent []int
	total := 0
	for i, id := range ids {
		k, ok := byMsg[id]
		if !ok {
			continue
		}
		n := utf8.RuneCountInString(k.Text)
		if total+n > p.opt.Recall.KeptChars {
			sent, total = sent[:0], 0
		}
		sent = append(sent, i)
		total += n
	}
	kept := map[string]bool{}
	for _, i := range sent {
		k := byMsg[ids[i]]
		m.History[i].Recalled = k.Text
		for _, it := range k.Items {
			kept[it.ItemID] = true
		}
	}
	return kept
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

// keepRecall stores the recall block a turn showed, now that its reply is
// stored: the next turn sends it again in place. It is written before the
// turn ends, so the chat's next turn always finds it; a failure only costs
// that turn's prompt its place in a provider's cache.
func (p *Pipeline) keepRecall(ctx context.Context, k *keptBlock) {
	if k == nil {
		return
	}
	if err := p.opt.Store.KeepRecall(ctx, k.block, k.items); err != nil && !errors.Is(err, models.ErrChatGone) {
		p.log.Warn("keep recall", "chat_id", k.block.ChatID, "err", err)
	}
}
