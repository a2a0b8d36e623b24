package bot

import (
	"context"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
	"troupe/recall"
)

// pendingRecall is a turn's recall search, started before the rest of its
// prompt is read (searchRecall) and finished into it (addRecall).
type pendingRecall struct {
	in      memory.RecallInput
	cfg     memory.RecallConfig
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	// cued are the ids of the messages whose text the search cues on.
	cued []string
	// fresh is where those messages start in the branch's uncovered ones
	// (prompt.NewMessages).
	fresh int
	done  chan struct{}
	found memory.RecallFound
	err   error
	// busy: turns were waiting for a slot when the search started; it
	// looks at fewer candidates. mode is how the turn's recall went
	// (RecallFull…).
	busy bool
	mode string
	// got is what the turn picked (addRecall); nil when it picked
	// nothing. The prompt's trace reads it.
	got *memory.Recalled
}

// recallOn reports whether turns recall: recall needs the recorder's
// perceptions.
func (p *Pipeline) recallOn() bool {
	return p.opt.Recall.Enabled && p.opt.Recorder.Enabled
}

// searchRecall starts the search for what character remembers of its own
// perceptions and beliefs that bears on cued, the messages new to it on
// the branch ending at headID (memory.FindRecall), so that it reads the
// store while the turn reads the rest of its prompt. recall.timeout counts
// from here. addRecall finishes it.
func (p *Pipeline) searchRecall(ctx context.Context, cs chatState, character, headID string, cued []models.Message) *pendingRecall {
	rc := p.opt.Recall
	r := &pendingRecall{timeout: rc.Timeout, done: make(chan struct{}),
		in: memory.RecallInput{Language: p.language(cs.card), SpaceID: cs.chat.SpaceID, Character: character, ChatID: cs.chat.ID, HeadID: headID}}
	// The nickname {{char}} becomes is the speaker's own; its card's name,
	// when it differs from its cast name, is another card's in the space.
	if character == cs.speakerName() && cs.card.Nickname != "" {
		r.in.Aliases = []string{cs.card.Nickname}
	}
	for _, m := range cued {
		r.cued = append(r.cued, m.ID)
		r.in.New = append(r.in.New, m.Content)
	}
	if r.timeout <= 0 {
		r.timeout = 5 * time.Second
	}
	r.ctx, r.cancel = context.WithTimeout(ctx, r.timeout)
	r.cfg = memory.RecallConfigFrom(rc, p.opt.MemoryConfig)
	r.cfg.Vectors, r.cfg.Rerank = p.opt.RecallVectors, p.opt.Reranker
	r.busy = rc.BusyWait > 0 && p.gate.busy()
	if r.busy {
		r.cfg.Candidates = fewerCandidates(r.cfg.Candidates, r.cfg.Params.MaxItems)
		if int(p.recalls.running.Load()) >= 2*p.ConcurrentTurns() {
			// Enough searches are running already: this turn loads
			// what its chat's last one ranked (addRecall).
			r.err = errRecallLate
			r.cancel()
			close(r.done)
			return r
		}
	}
	// The search has its own copy of the input: the turn adds what is in
	// its prompt to r.in meanwhile (recallFor, addRecall).
	in := r.in
	key := recallKey(in.ChatID, in.Character)
	p.recalls.running.Add(1)
	go func() {
		defer close(r.done)
		defer p.recalls.running.Add(-1)
		defer p.survive("recall", &r.err)
		if p.opt.RecallDelay != nil {
			p.opt.RecallDelay(r.ctx)
		}
		r.found, r.err = memory.FindRecall(r.ctx, p.opt.Store, r.cfg, in)
		if r.err == nil {
			// Kept also when the turn stopped waiting: its chat's next
			// turn under load loads it again.
			p.recalls.put(key, r.found.Ranked())
		}
	}()
	return r
}

// stop abandons a search nobody will finish; nil is fine.
func (r *pendingRecall) stop() {
	if r != nil {
		r.cancel()
	}
}

// recallFor is the turn's recall search for the branch br: early when it
// cued on exactly the messages new to the speaker on br, else a search
// started now. The cues are what is new to the speaker since its own last
// line: the user's messages and, in a scene, the other members' lines
// between. nil when recall or the recorder is off, or nothing is
// uncovered.
func (p *Pipeline) recallFor(ctx context.Context, cs chatState, br models.Branch, early *pendingRecall) *pendingRecall {
	if !p.recallOn() || len(br.Uncovered) == 0 {
		early.stop()
		return nil
	}
	history := memory.TurnsOf(br.Uncovered)
	nameLines(cs, br.Uncovered, history)
	fresh := prompt.NewMessages(history)
	cued := br.Uncovered[fresh:]
	r := early
	head := br.Uncovered[len(br.Uncovered)-1].ID
	if r == nil || r.in.HeadID != head || !slices.EqualFunc(r.cued, cued, func(id string, m models.Message) bool { return m.ID == id }) {
		early.stop()
		r = p.searchRecall(ctx, cs, cs.speakerName(), head, cued)
	}
	r.fresh = fresh
	r.in.InPrompt = make(map[string]bool, len(br.Uncovered))
	for _, msg := range br.Uncovered {
		r.in.InPrompt[msg.ID] = true
	}
	return r
}

// addRecall gives the prompt the recall block that r finds. Past
// recall.timeout, or on an error, the turn goes on without it. Recalling
// counts: the picked items' recall counts (and, with recall.diagnostics,
// the inspector's record) are written after the prompt is built, off the
// turn's path.
//
// With recall.kept_chars, the blocks earlier turns showed are sent again
// where they stood (keptRecalls), and the new block shows only what they
// do not: the block to keep for this turn is returned, for the pipeline to
// store while the model answers (keepRecall).
func (p *Pipeline) addRecall(ctx context.Context, r *pendingRecall, cs chatState, br models.Branch, pre *branchRead, m *prompt.Material) *keptBlock {
	if r == nil {
		return nil
	}
	rc := p.opt.Recall
	if rc.KeptChars > 0 {
		r.in.Kept = p.keptRecalls(ctx, cs, br.Uncovered[:r.fresh], r.in.Character, pre, m)
	}
	found, err := p.awaitRecall(ctx, r)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			p.log.Warn("recall over its time; the turn goes on without it", "chat_id", cs.chat.ID, "timeout", r.timeout)
		} else if !errors.Is(err, errRecallLate) {
			p.log.Warn("recall", "chat_id", cs.chat.ID, "err", err)
		}
		return p.turnBlock(cs, br, r, memory.Recalled{})
	}
	got := found.Pick(r.cfg, r.in)
	m.Recall = got.Block
	r.got = &got
	for _, s := range got.Skipped {
		p.log.Warn("recall went on without a part", "chat_id", cs.chat.ID, "skipped", s)
	}
	character := r.in.Character
	done := models.RecallDone{Perceptions: got.Perceptions, Beliefs: got.Beliefs, Keep: rc.DiagnosticsTurns}
	if rc.Diagnostics {
		done.Diagnostic = &models.RecallDiagnostic{ChatID: cs.chat.ID, MessageID: r.in.HeadID, Character: character,
			Data: got.Report(character).JSON()}
		// The record is filed under the items it names, so forgetting one
		// of them (its chat, a belief) deletes it wherever it is.
		for _, s := range got.Scored {
			if s.Kind == recall.Belief {
				done.Diagnostic.Beliefs = append(done.Diagnostic.Beliefs, s.ID)
			} else {
				done.Diagnostic.Perceptions = append(done.Diagnostic.Perceptions, s.ID)
			}
		}
	}
	keep := p.turnBlock(cs, br, r, got)
	if len(done.Perceptions)+len(done.Beliefs) == 0 && done.Diagnostic == nil {
		return keep
	}
	p.wg.Add(1)
	noted := p.notes.start(cs.chat.ID)
	go func() {
		defer p.wg.Done()
		defer noted()
		defer p.survive("note_recall", nil)
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.opt.Store.NoteRecall(wctx, done); err != nil {
			p.log.Warn("note recall", "chat_id", cs.chat.ID, "err", err)
		}
	}()
	return keep
}

// awaitRecall waits for r's search: up to recall.timeout, or, while turns
// wait for a slot, up to recall.busy_wait. A search late under load goes
// on (its ranking is kept for the chat's next turn); this turn loads again
// what the chat's last search ranked, and has no new block when there is
// none (errRecallLate). r.mode says which it was.
func (p *Pipeline) awaitRecall(ctx context.Context, r *pendingRecall) (memory.RecallFound, error) {
	r.mode = RecallFull
	if r.busy {
		r.mode = RecallFewer
	}
	// Load that comes while the turn waits counts too: every busy_wait
	// the turn looks again.
	var tick <-chan time.Time
	if wait := p.opt.Recall.BusyWait; wait > 0 {
		t := time.NewTicker(wait)
		defer t.Stop()
		tick = t.C
	}
	// A context done before the search returns wins: the turn does not
	// wait on a store that hangs.
	var err error
	for err == nil {
		select {
		case <-r.done:
			if r.err == nil {
				r.cancel()
				return r.found, nil
			}
			err = r.err
		case <-r.ctx.Done():
			err = r.ctx.Err()
		case <-tick:
			if r.busy || p.gate.busy() {
				err = errRecallLate
			}
		}
	}
	if !errors.Is(err, errRecallLate) {
		r.cancel()
		r.mode = RecallFailed
		return memory.RecallFound{}, err
	}
	r.mode = RecallLate
	ranked := p.recalls.get(recallKey(r.in.ChatID, r.in.Character))
	if ranked == nil {
		return memory.RecallFound{}, errRecallLate
	}
	lctx, cancel := context.WithTimeout(ctx, 2*p.opt.Recall.BusyWait)
	defer cancel()
	found, err := memory.RecallAgain(lctx, p.opt.Store, r.in, ranked)
	if err != nil {
		p.log.Debug("recall: loading the chat's last ranking again", "chat_id", r.in.ChatID, "err", err)
		return memory.RecallFound{}, errRecallLate
	}
	r.mode = RecallCached
	return found, nil
}

// turnBlock is the block to keep for the turn (with recall.kept_chars):
// the recall block got shows, before the message it was recalled for. Its
// scene is set once the prompt is built (withScene).
func (p *Pipeline) turnBlock(cs chatState, br models.Branch, r *pendingRecall, got memory.Recalled) *keptBlock {
	if p.opt.Recall.KeptChars <= 0 || r.fresh >= len(br.Uncovered) {
		return nil
	}
	return &keptBlock{block: models.RecallKept{MessageID: br.Uncovered[r.fresh].ID, Character: r.in.Character, ChatID: cs.chat.ID,
		Text: got.Block}, items: got.Shown}
}

// withScene gives k the scene the built prompt sent at its end
// (prompt.Fit.EndScene); nil when k then keeps nothing.
func (k *keptBlock) withScene(scene string) *keptBlock {
	if k == nil {
		return nil
	}
	k.block.Scene = scene
	if k.block.Text == "" && scene == "" {
		return nil
	}
	return k
}

// keptBlock is the recall block and scene a turn showed, to keep once its
// reply is stored.
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
// message, and the prompt changes in one place at a time. The blocks are
// those pre read beside the store when it did (of a branch that holds the
// older messages), else read now; a read that fails leaves them out. The
// scenes kept with the blocks go to m's history whatever the count:
// prompt.KeptSceneAt decides whether the newest one is sent.
func (p *Pipeline) keptRecalls(ctx context.Context, cs chatState, older []models.Message, character string, pre *branchRead, m *prompt.Material) map[string]bool {
	if len(older) == 0 {
		return nil
	}
	ids := messageIDs(older)
	var rows []models.RecallKept
	var err error
	if pre != nil && pre.keptRead {
		rows, err = pre.kept, pre.keptErr
	} else {
		rows, err = p.opt.Store.KeptRecalls(ctx, cs.chat.ID, character, ids)
	}
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
	for i, id := range ids {
		// The scene goes by its own rule (prompt.KeptSceneAt), not the count.
		m.History[i].Scene = byMsg[id].Scene
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

// keepRecall stores the recall block a turn showed, in the background,
// and returns a wait for it: the turn waits before it ends, so the chat's
// next turn always finds it and sends it again in place. A failure only
// costs that turn's prompt its place in a provider's cache.
func (p *Pipeline) keepRecall(ctx context.Context, k *keptBlock) (wait func()) {
	if k == nil {
		return func() {}
	}
	done := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(done)
		defer p.survive("keep_recall", nil)
		if err := p.opt.Store.KeepRecall(ctx, k.block, k.items); err != nil && !errors.Is(err, models.ErrChatGone) {
			p.log.Warn("keep recall", "chat_id", k.block.ChatID, "err", err)
		}
	}()
	return func() { <-done }
}
