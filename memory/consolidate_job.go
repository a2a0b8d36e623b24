package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"troupe/handbook"
	"troupe/models"
	"troupe/prompt"
)

// Consolidate merges changed recaps into the handbook and resident of a card
// in a space and removes deleted chats. Nothing changed means no model call.
// The result is recorded.
func (s *Service) Consolidate(ctx context.Context, cardID, spaceID string) (Result, error) {
	key := models.MemoryJobKey(cardID, spaceID)
	var res Result
	var err error
	batches, stale := 0, 0
	for {
		r, more, cerr := s.consolidate(ctx, cardID, spaceID, batches > 0)
		if errors.Is(cerr, models.ErrStale) {
			s.log.Info("memory changed while the scribe wrote; consolidating again", "card_id", cardID, "space_id", spaceID)
			if stale++; stale < 3 {
				continue
			}
			cerr = ErrStaleRetries
		}
		if cerr != nil || r.Outcome != Written {
			if batches == 0 {
				res = r
			}
			// The batches merged stand; the rest stays owed.
			err = cerr
			break
		}
		res, batches = r, batches+1
		if !more {
			if batches > 1 {
				res.Reason += fmt.Sprintf(" (%d batches)", batches)
			}
			break
		}
	}
	return s.record(ctx, KindConsolidate, key, res, err)
}

// consolidate merges the changed recaps that fit one scribe call (the
// oldest entries first; all when they fit) and removes the deleted chats;
// more says changed recaps remain for the next call. continues says an
// earlier batch of this consolidation was installed.
func (s *Service) consolidate(ctx context.Context, cardID, spaceID string, continues bool) (Result, bool, error) {
	state, err := s.store.LoadMemory(ctx, cardID, spaceID)
	if err != nil {
		return Result{}, false, err
	}
	recaps := map[string]models.Recap{}
	for _, r := range state.Recaps {
		recaps[r.ChatID] = r
	}
	known, deleted := map[string]bool{}, map[string]bool{}
	var deletedIDs, waiting []string
	var changed []ChangedRecap
	var live, blocks []models.Recap
	merged := map[string]string{}
	for _, e := range state.Entries {
		r, ok := recaps[e.ChatID]
		switch {
		case !ok && e.MergedHash != "":
			deleted[e.ChatID] = true
			deletedIDs = append(deletedIDs, e.ChatID)
		case ok:
			known[e.ChatID] = true
			live = append(live, r)
			current, err := s.recapOnBranch(ctx, r)
			if err != nil {
				return Result{}, false, err
			}
			if !current {
				// A /regen discarded a turn the recap covers: neither
				// merged nor shown as the chat's block until the recap
				// job, owed since the chat's head moved, writes it again
				// from the branch.
				waiting = append(waiting, r.ChatID)
				continue
			}
			blocks = append(blocks, r)
			if r.Hash != e.MergedHash {
				changed = append(changed, ChangedRecap{ChatID: r.ChatID, ChatName: r.ChatName, Content: r.Content})
				merged[r.ChatID] = r.Hash
			}
		}
	}
	// The hard path (a hand edit, a deleted recap, a recap of a discarded
	// turn) clears every merge mark: the handbook and resident are then
	// rebuilt from the remaining recaps, on a base of the person's lines
	// alone, so no entry of the old files survives by the scribe's choice.
	// The install moves the old files to history.
	rebuild := len(state.Entries) > 0 && !anyMerged(state.Entries)
	base := state
	if rebuild {
		base.Handbook, base.Resident = handbook.HandOnly(state.Handbook, state.HandbookHand), handbook.HandOnly(state.Resident, state.ResidentHand)
	}
	if len(changed) == 0 && len(deleted) == 0 {
		if len(waiting) > 0 {
			return Result{Outcome: Skipped, Reason: ReasonOffBranch + ": " + strings.Join(waiting, ", ")}, false, nil
		}
		return Result{Outcome: Skipped, Reason: "nothing changed"}, false, nil
	}
	sort.Strings(deletedIDs)
	lang, charName := s.cardLanguage(ctx, cardID)
	in := ConsolidationPromptInput{Language: lang, CharName: charName, Handbook: handbook.CrossSections(base.Handbook), Resident: base.Resident,
		Deleted: deletedIDs, Changed: changed, ResidentMax: ResidentRoom(s.cfg.ResidentMaxChars, handbook.HandEdits(base.Resident, base.ResidentHand))}
	for _, r := range live {
		in.Chats = append(in.Chats, ChatRef{ID: r.ChatID, Name: r.ChatName})
	}
	check := ConsolidationCheck{Language: lang, Known: known, Deleted: deleted, PrevHandbook: base.Handbook, PrevResident: base.Resident,
		PrevHandbookHand: state.HandbookHand, PrevResidentHand: state.ResidentHand, ResidentMax: s.cfg.ResidentMaxChars}
	var cross, resident string
	build := func(k int) batch {
		b := in
		b.Changed = changed[:min(k, len(changed))]
		var material strings.Builder
		for _, c := range b.Changed {
			material.WriteString(c.Content)
		}
		return batch{prompt: ConsolidationPrompt(b), material: material.String()}
	}
	_, k, err := askBatch(s, KindConsolidate, len(changed), build, func(p []prompt.Message) (string, error) {
		return s.ask(ctx, KindConsolidate, lang, p, func(a string) (string, error) {
			ans, err := CheckConsolidation(a, check)
			cross, resident = ans.Handbook, ans.Resident
			if err == nil && len(ans.Dropped) > 0 {
				// The engine builds each chat's block from its recap.
				s.log.Debug("dropped the chat blocks the scribe wrote", "card_id", cardID, "space_id", spaceID, "chat_ids", ans.Dropped)
			}
			return a, err
		})
	})
	if err != nil {
		return Result{}, false, err
	}
	more := len(changed) > 0 && k < len(changed)
	if more {
		// Only the batch's recaps are marked merged: the others stay owed.
		for _, c := range changed[k:] {
			delete(merged, c.ChatID)
		}
		changed = changed[:k]
	}
	err = s.store.InstallConsolidation(ctx, models.Consolidation{CardID: cardID, SpaceID: spaceID, Version: state.Version(),
		Handbook: BuildHandbook(lang, blocks, cross), Resident: resident, Merged: merged, Deleted: deletedIDs,
		Tokens: prompt.EstimateTokens(cross) + prompt.EstimateTokens(resident), Continues: continues})
	if err != nil {
		return Result{}, false, err
	}
	reason := fmt.Sprintf("merged %d recaps, removed %d chats", len(changed), len(deletedIDs))
	if rebuild {
		reason = fmt.Sprintf("rebuilt from %d recaps and the hand-written lines", len(changed))
	}
	if len(waiting) > 0 {
		reason += "; " + ReasonOffBranch + ": " + strings.Join(waiting, ", ")
	}
	return Result{Outcome: Written, Product: "handbook:" + cardID + "|" + spaceID, Reason: reason}, more, nil
}

// anyMerged reports whether any entry carries a merge mark.
func anyMerged(entries []models.ManifestEntry) bool {
	for _, e := range entries {
		if e.MergedHash != "" {
			return true
		}
	}
	return false
}

// ReasonOffBranch: recaps that cover a turn a /regen discarded wait for
// their rewrite.
const ReasonOffBranch = "recaps waiting to be written again from their chat's branch"

// recapOnBranch reports whether what the recap r covers is still on its
// chat's branch (see onBranch); a recap whose chat is gone is not.
func (s *Service) recapOnBranch(ctx context.Context, r models.Recap) (bool, error) {
	if r.Covers == "" {
		return true, nil
	}
	chat, err := s.store.Chat(ctx, r.ChatID)
	if errors.Is(err, models.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s.onBranch(ctx, chat, r)
}

// Forgotten describes a chat /forget removed.
type Forgotten struct {
	ChatID, CardID, SpaceID string
	// Cards lists every card the chat cast (CardID first): each one's
	// memory in the space lost the chat and owes a consolidation.
	Cards []string
}

// ForgetChat deletes a chat and, at once and without a model, every entry
// of the handbooks and residents only it supports, those of every card it
// cast; the caller then enqueues the consolidation of each card in the
// space.
func (s *Service) ForgetChat(ctx context.Context, chatID string) (Forgotten, error) {
	ts, err := s.store.ForgetChat(ctx, chatID)
	if err != nil {
		return Forgotten{}, err
	}
	s.log.Info("chat forgotten", "chat_id", chatID, "card_id", ts.CardID, "space_id", ts.SpaceID)
	s.forgetKept(chatID)
	if s.vectors != nil {
		s.vectors.Cache.DropSpace(ts.SpaceID)
	}
	cards := ts.Cards
	if len(cards) == 0 {
		cards = []string{ts.CardID}
	}
	return Forgotten{ChatID: chatID, CardID: ts.CardID, SpaceID: ts.SpaceID, Cards: cards}, nil
}

// DeleteRecap deletes the recaps of a chat by hand (the hard path): every
// cast card's, or only cardID's when it is set, purging each card's
// handbook and resident of the chat's lines. It returns the (card, space)
// pairs to consolidate again.
func (s *Service) DeleteRecap(ctx context.Context, chatID, cardID string) ([]models.MemoryKey, error) {
	return s.store.DeleteRecap(ctx, chatID, cardID)
}
