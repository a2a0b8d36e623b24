package bot

import (
	"context"
	"slices"
	"time"

	"troupe/models"
	"troupe/prompt"
	"troupe/recall"
)

// promptTrace is a built prompt as the inspector shows it (web.prompts):
// its blocks with their tokens and the items recall showed, computed when
// the prompt is built (with the count the turn used) and stored once the
// reply is (writeTrace). nil when traces are off: nothing is computed.
type promptTrace struct {
	trace                     models.PromptTrace
	showsResident, showsScene bool
}

// tracesOn reports whether replies keep their prompt trace.
func (p *Pipeline) tracesOn() bool { return p.opt.PromptTraces > 0 }

// traceCounter is the count the turn's budgets use.
func (p *Pipeline) traceCounter() TokenCounter {
	switch {
	case p.opt.Tokens != nil:
		return p.opt.Tokens
	case p.tokens != nil:
		return p.tokens.count
	}
	return prompt.NewEstimator()
}

// tracePrompt names the blocks of the built prompt pr (assembled again
// from what it was built of, prompt.AssembleBlocks) and counts each with
// the turn's counter: a message's tokens, its overhead included, go to its
// first block, so the blocks add up to the prompt's count. rec is the
// turn's recall (nil without), br its branch. nil when traces are off or
// the blocks do not rebuild the prompt sent.
func (p *Pipeline) tracePrompt(cs chatState, br models.Branch, rp replyPlan, pr prompt.Prompt, rec *pendingRecall) *promptTrace {
	if !p.tracesOn() {
		return nil
	}
	msgs, blocks := prompt.AssembleBlocks(pr.Input)
	if !slices.Equal(msgs, pr.Messages) {
		p.log.Warn("prompt trace: the blocks do not rebuild the prompt; none is kept", "chat_id", cs.chat.ID)
		return nil
	}
	count := p.traceCounter()
	key := cs.chat.ID
	base := count.Estimate(key, nil)
	empty := count.Estimate(key, []prompt.Message{{}})
	names := make(map[string]string, len(br.Uncovered))
	for _, m := range br.Uncovered {
		names[m.ID] = m.AuthorName
	}
	t := &promptTrace{trace: models.PromptTrace{ParentID: rp.parent, ChatID: cs.chat.ID, CardID: cs.speakerCard(), SpaceID: cs.chat.SpaceID,
		Character: cs.speakerName(), Model: p.opt.ModelName, EstimatedTokens: pr.Tokens}}
	if t.trace.CardID == "" {
		t.trace.CardID = cs.chat.CardID
	}
	if t.trace.EstimatedTokens <= 0 {
		t.trace.EstimatedTokens = count.Estimate(key, msgs)
	}
	out := make([]models.PromptBlock, len(blocks))
	first := -1
	for i, b := range blocks {
		out[i] = models.PromptBlock{Kind: b.Kind, Label: p.blockLabel(cs, b, names), Message: b.Message, Role: b.Role, Ref: b.Ref, Text: b.Text}
		if i == 0 || blocks[i-1].Message != b.Message {
			first = i
			out[i].Tokens = count.Estimate(key, msgs[b.Message:b.Message+1]) - base
			continue
		}
		// A later part of a message: its own text; the message's first
		// block keeps the rest.
		n := max(count.Estimate(key, []prompt.Message{{Content: b.Text}})-empty, 0)
		out[i].Tokens = n
		out[first].Tokens -= n
	}
	for _, b := range blocks {
		switch b.Kind {
		case prompt.BlockResident:
			t.showsResident = true
		case prompt.BlockScene:
			t.showsScene = true
		}
	}
	t.trace.Blocks = out
	t.trace.Items = traceItems(blocks, rec)
	if rec != nil {
		t.trace.Recall = rec.mode
	}
	return t
}

// traceItems lists what the prompt's recall blocks show: this turn's
// picked items with their scores and why, then the items of the earlier
// turns' kept blocks.
func traceItems(blocks []prompt.Block, rec *pendingRecall) []models.PromptRecallItem {
	if rec == nil {
		return nil
	}
	var recalled, kept bool
	for _, b := range blocks {
		recalled = recalled || b.Kind == prompt.BlockRecall
		kept = kept || b.Kind == prompt.BlockKeptRecall
	}
	var out []models.PromptRecallItem
	seen := map[string]bool{}
	if recalled && rec.got != nil {
		shown := map[string]bool{}
		for _, id := range rec.got.Shown {
			shown[id] = true
		}
		for _, s := range rec.got.Scored {
			if !s.Picked || !shown[s.ID] {
				continue
			}
			kind := models.RecallPerception
			if s.Kind == recall.Belief {
				kind = models.RecallBelief
			}
			seen[s.ID] = true
			out = append(out, models.PromptRecallItem{ID: s.ID, Kind: kind, Block: prompt.BlockRecall, Importance: s.Components.Importance, Relevance: s.Components.Relevance,
				Recency: s.Recency, Retention: s.Retention, Total: s.Total, Faded: s.Faded, Why: s.Why})
		}
	}
	if kept {
		ids := make([]string, 0, len(rec.in.Kept))
		for id := range rec.in.Kept {
			if !seen[id] {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, models.PromptRecallItem{ID: id, Block: prompt.BlockKeptRecall})
		}
	}
	return out
}

// blockLabel is a block's short label: what it is, and for a story
// message who wrote it.
func (p *Pipeline) blockLabel(cs chatState, b prompt.Block, names map[string]string) string {
	en := p.language(cs.card) != "zh"
	pick := func(e, z string) string {
		if en {
			return e
		}
		return z
	}
	switch b.Kind {
	case prompt.BlockCharacter:
		return pick("character: ", "角色：") + cs.speakerName()
	case prompt.BlockCharacterLore:
		return pick("character and lore: ", "角色与世界书：") + cs.speakerName()
	case prompt.BlockConventions:
		return pick("conventions", "约定")
	case prompt.BlockSummary:
		return pick("relay summary", "接力摘要")
	case prompt.BlockResident:
		return pick("resident summary (handbook)", "常驻摘要（手册）")
	case prompt.BlockPlayers:
		return pick("other players", "其他玩家")
	case prompt.BlockInjection:
		return pick("lore and notes in the story", "故事中的世界书与注记")
	case prompt.BlockKeptRecall:
		return pick("recall kept from an earlier turn", "先前回合保留的回忆")
	case prompt.BlockRecall:
		return pick("recall", "回忆")
	case prompt.BlockScene:
		return pick("scene", "场景")
	case prompt.BlockPostHistory:
		return pick("post-history instructions", "历史后指令")
	case prompt.BlockHistory, prompt.BlockNew:
		who := names[b.Ref]
		if who == "" {
			who = b.Role
		}
		if b.Kind == prompt.BlockNew {
			return pick("new: ", "新消息：") + who
		}
		return who
	}
	return b.Kind
}

// writeTrace stores the trace of the reply messageID in the background,
// with the prompt tokens the provider reported (0: none), keeping the
// chat's last web.prompts. A failure costs only the inspector's view.
func (p *Pipeline) writeTrace(t *promptTrace, messageID string, reported int) {
	if t == nil {
		return
	}
	w := models.PromptTraceWrite{Trace: t.trace, ShowsResident: t.showsResident, ShowsScene: t.showsScene, Keep: p.opt.PromptTraces}
	w.Trace.MessageID, w.Trace.ReportedTokens = messageID, reported
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.survive("prompt_trace", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.opt.Store.RecordPromptTrace(ctx, w); err != nil {
			p.log.Warn("prompt trace", "chat_id", w.Trace.ChatID, "err", err)
		}
	}()
}
