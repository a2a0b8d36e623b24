package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"gorm.io/gorm"

	"troupe/belief"
	"troupe/recall"
)

// The inspector's reads of a card's memory, a character and a space's
// index: each bounded, so a page costs the same with ten thousand
// perceptions as with ten.

// ExistingChats reports which of ids are chats in the store: the
// inspector links a provenance tag only to a chat that exists.
func (s *Store) ExistingChats(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for part := range slices.Chunk(ids, 500) {
		var found []string
		if err := s.db.WithContext(ctx).Model(&Chat{}).Where("id IN ?", part).Pluck("id", &found).Error; err != nil {
			return nil, fmt.Errorf("models: chats exist: %w", err)
		}
		for _, id := range found {
			out[id] = true
		}
	}
	return out, nil
}

// SpaceIDs lists the spaces, by id.
func (s *Store) SpaceIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&Space{}).Order("id").Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("models: spaces: %w", err)
	}
	return ids, nil
}

// CharacterOf reads a character of a space by name, or ErrNotFound.
func (s *Store) CharacterOf(ctx context.Context, spaceID, name string) (Character, error) {
	var c Character
	err := s.db.WithContext(ctx).Where("space_id = ? AND name = ?", spaceID, name).Take(&c).Error
	return c, notFound(err)
}

// PerceptionPage is one page of a character's perceptions, newest first.
type PerceptionPage struct {
	Perceptions []Perception
	// Total counts all the character's perceptions in the space.
	Total int64
	// More: older perceptions follow the last of this page.
	More bool
}

// CharacterPerceptions reads up to limit of a character's perceptions in
// a space, newest first, older than the perception (beforeSeq, beforeID)
// when beforeID is set: one range of the story index.
func (s *Store) CharacterPerceptions(ctx context.Context, spaceID, character string, beforeSeq int64, beforeID string, limit int) (PerceptionPage, error) {
	var pg PerceptionPage
	db := s.db.WithContext(ctx)
	char := FitName(character, NameSize)
	q := db.Where("space_id = ? AND character_name = ?", spaceID, char)
	if beforeID != "" {
		q = q.Where("seq < ? OR (seq = ? AND id < ?)", beforeSeq, beforeSeq, beforeID)
	}
	if err := q.Order("seq DESC, id DESC").Limit(limit + 1).Find(&pg.Perceptions).Error; err != nil {
		return pg, fmt.Errorf("models: perceptions of %s: %w", character, err)
	}
	if len(pg.Perceptions) > limit {
		pg.Perceptions, pg.More = pg.Perceptions[:limit], true
	}
	if err := db.Model(&Perception{}).Where("space_id = ? AND character_name = ?", spaceID, char).Count(&pg.Total).Error; err != nil {
		return pg, fmt.Errorf("models: perceptions of %s: %w", character, err)
	}
	return pg, nil
}

// StoryNow gives, for each chat, the latest story minute its record
// reached (day*1440+minute of its newest event): fading counts from it.
func (s *Store) StoryNow(ctx context.Context, chatIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for part := range slices.Chunk(chatIDs, 500) {
		var rows []struct {
			ChatID string
			Now    int64
		}
		if err := s.db.WithContext(ctx).Model(&Event{}).Select("chat_id, MAX(day * 1440 + minute) AS now").
			Where("chat_id IN ? AND sealed = ?", part, true).Group("chat_id").Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("models: story time: %w", err)
		}
		for _, r := range rows {
			out[r.ChatID] = r.Now
		}
	}
	return out, nil
}

// PerceptionsByID reads the perceptions with the given ids.
func (s *Store) PerceptionsByID(ctx context.Context, ids []string) (map[string]Perception, error) {
	out := map[string]Perception{}
	for part := range slices.Chunk(ids, 500) {
		var ps []Perception
		if err := s.db.WithContext(ctx).Where("id IN ?", part).Find(&ps).Error; err != nil {
			return nil, fmt.Errorf("models: perceptions: %w", err)
		}
		for _, p := range ps {
			out[p.ID] = p
		}
	}
	return out, nil
}

// BeliefPage is one page of a character's beliefs, newest first, with
// their evidence and the contradictions their checks recorded, dated.
type BeliefPage struct {
	Beliefs []BeliefView
	// Rows are the beliefs' stored rows by id (recall count, times).
	Rows map[string]Belief
	// Checks are the dated contradictions belief checks found, by belief.
	Checks map[string][]BeliefCheck
	// Changes are the steps of each belief's confidence, oldest first.
	Changes map[string][]BeliefChange
	Total   int64
}

// CharacterBeliefs reads a page of a character's beliefs in a space,
// newest formed first: offset and limit bound it.
func (s *Store) CharacterBeliefs(ctx context.Context, spaceID, character string, offset, limit int) (BeliefPage, error) {
	pg := BeliefPage{Rows: map[string]Belief{}, Checks: map[string][]BeliefCheck{}, Changes: map[string][]BeliefChange{}}
	db := s.db.WithContext(ctx)
	char := FitName(character, NameSize)
	var rows []Belief
	if err := db.Where("space_id = ? AND character_name = ?", spaceID, char).Order("formed_seq DESC, id DESC").
		Offset(offset).Limit(limit).Find(&rows).Error; err != nil {
		return pg, fmt.Errorf("models: beliefs of %s: %w", character, err)
	}
	if err := db.Model(&Belief{}).Where("space_id = ? AND character_name = ?", spaceID, char).Count(&pg.Total).Error; err != nil {
		return pg, fmt.Errorf("models: beliefs of %s: %w", character, err)
	}
	if len(rows) == 0 {
		return pg, nil
	}
	ids := make([]string, len(rows))
	for i, b := range rows {
		ids[i] = b.ID
		pg.Rows[b.ID] = b
	}
	ev, err := beliefEvidence(db, ids, nil)
	if err != nil {
		return pg, err
	}
	var checks []BeliefCheck
	if err := db.Where("belief_id IN ?", ids).Order("created_at, perception_id").Find(&checks).Error; err != nil {
		return pg, fmt.Errorf("models: belief checks: %w", err)
	}
	for _, c := range checks {
		pg.Checks[c.BeliefID] = append(pg.Checks[c.BeliefID], c)
	}
	var changes []BeliefChange
	if err := db.Where("belief_id IN ?", ids).Order("seq, created_at").Find(&changes).Error; err != nil {
		return pg, fmt.Errorf("models: belief changes: %w", err)
	}
	for _, c := range changes {
		pg.Changes[c.BeliefID] = append(pg.Changes[c.BeliefID], c)
	}
	for _, b := range rows {
		pg.Beliefs = append(pg.Beliefs, BeliefView{Character: b.Character, Belief: beliefOf(b, ev[b.ID])})
	}
	return pg, nil
}

// CharacterRecord is the rest of a character's side of a space: what it
// thinks of others and they of it, what it knows, and the space's threads.
type CharacterRecord struct {
	Relationships []Relationship
	Knowledge     []KnownThing
	Threads       []Thread
}

// characterRecordLimit bounds each list of a CharacterRecord.
const characterRecordLimit = 500

// CharacterRecord reads a character's relationships (both ways) and
// knowledge, and the space's threads, open first, newest first; each list
// bounded.
func (s *Store) CharacterRecord(ctx context.Context, spaceID, character string) (CharacterRecord, error) {
	var r CharacterRecord
	db := s.db.WithContext(ctx)
	char := FitName(character, NameSize)
	steps := []func() error{
		func() error {
			return db.Where("space_id = ? AND (from_name = ? OR to_name = ?)", spaceID, char, char).
				Order("from_name, to_name").Limit(characterRecordLimit).Find(&r.Relationships).Error
		},
		func() error {
			return db.Table("knowledge_edges k").Select("k.character_name AS character, e.name AS entity, e.kind AS kind, k.chat_id AS chat_id, k.event_id AS event_id").
				Joins("JOIN entities e ON e.id = k.entity_id").Where("k.space_id = ? AND k.character_name = ?", spaceID, char).
				Order("e.name").Limit(characterRecordLimit).Scan(&r.Knowledge).Error
		},
		func() error {
			return db.Where("space_id = ?", spaceID).Order("open DESC, seq DESC, id").Limit(characterRecordLimit).Find(&r.Threads).Error
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return r, fmt.Errorf("models: record of %s in %s: %w", character, spaceID, err)
		}
	}
	return r, nil
}

// DeletePerception removes one perception by hand (the inspector's
// delete) and everything that depends on it, as forgetting its chat would
// for it alone: every belief citing it, for or against, and every belief
// merged from such a belief, goes (its wording may carry the perception),
// and the other perceptions those beliefs cited become new again
// (belief.Forget); its evidence links, check marks and seen mark, its
// recall index terms and vector, and the kept recall blocks and
// diagnostics that show it or a deleted belief go too. Its event stays:
// events are the objective record, and other characters' perceptions of
// it are theirs. It returns the deleted perception and the beliefs that
// went with it, or ErrNotFound.
func (s *Store) DeletePerception(ctx context.Context, id string) (Perception, belief.Forgotten, error) {
	var p Perception
	var f belief.Forgotten
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f = belief.Forgotten{}
		if err := tx.Where("id = ?", id).Take(&p).Error; err != nil {
			return notFound(err)
		}
		if _, err := s.lockChat(tx, p.ChatID); err != nil {
			if errors.Is(err, ErrChatGone) {
				return ErrNotFound
			}
			return err
		}
		// The space's beliefs' lock, as a forget of its chat takes it: a
		// reflection citing it commits first, or finds it gone. Read
		// again under the locks: another deletion may have gone first.
		if err := s.lockMemory(tx, spaceBeliefs(p.SpaceID)); err != nil {
			return err
		}
		if err := tx.Where("id = ?", id).Take(&p).Error; err != nil {
			return notFound(err)
		}
		views, err := loadBeliefs(tx, "space_id = ? AND character_name = ? AND id IN (SELECT belief_id FROM belief_evidence WHERE perception_id = ? UNION SELECT belief_id FROM belief_checks WHERE perception_id = ?)",
			p.SpaceID, p.Character, id, id)
		if err != nil {
			return err
		}
		if len(views) > 0 {
			// Beliefs merged from those go too: Forget follows MergedFrom
			// over all the character's beliefs.
			if views, err = loadBeliefs(tx, "space_id = ? AND character_name = ?", p.SpaceID, p.Character); err != nil {
				return err
			}
		}
		bs := make([]belief.Belief, len(views))
		for i, v := range views {
			bs[i] = v.Belief
		}
		// loadBeliefs counts a check's contradiction as evidence against:
		// a belief a check found it contradicting goes too.
		f = belief.Forget(bs, map[string]bool{id: true})
		if len(f.Deleted) > 0 {
			if err := deleteBeliefs(tx, f.Deleted); err != nil {
				return err
			}
			if err := forgetDiagnostics(tx, f.Deleted, ""); err != nil {
				return err
			}
		}
		if err := renew(tx, f.Renewed); err != nil {
			return err
		}
		ids := []string{id}
		if err := unkeepShowing(tx, ids); err != nil {
			return err
		}
		if err := forgetDiagnostics(tx, ids, ""); err != nil {
			return err
		}
		for _, m := range []any{&BeliefEvidence{}, &BeliefCheck{}, &ReflectionSeen{}} {
			if err := tx.Where("perception_id = ?", id).Delete(m).Error; err != nil {
				return err
			}
		}
		for _, m := range []any{&RecallTerm{}, &RecallOwed{}, &RecallVector{}} {
			if err := tx.Where("item_id = ?", id).Delete(m).Error; err != nil {
				return err
			}
		}
		return tx.Where("id = ?", id).Delete(&Perception{}).Error
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("models: delete perception %s: %w", id, err)
	}
	return p, f, err
}

// SpaceHit is one item of a space's recall index that a search found.
type SpaceHit struct {
	ItemID string
	// Kind is RecallPerception or RecallBelief.
	Kind      string
	Character string
	// ChatID is a perception's chat ("" for a belief), from its row.
	ChatID string
	Seq    int64
	Text   string
	// Matched counts the search's terms the item has.
	Matched int
}

// SearchSpace searches the recall index of a space for terms
// (recall.Keywords and cues of the query, as recall searches) with the
// query recall itself uses (RecallHits), for each character of the space:
// each term's newest entries, so a search costs characters × terms ×
// limit index entries at most, however long the story. The items with the
// most terms come first, then the newest, up to limit, with their rows.
func (s *Store) SearchSpace(ctx context.Context, spaceID string, terms []string, limit int) ([]SpaceHit, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	db := s.db.WithContext(ctx)
	var chars []string
	if err := db.Model(&Character{}).Where("space_id = ?", spaceID).Order("name").Pluck("name", &chars).Error; err != nil {
		return nil, fmt.Errorf("models: search %s: %w", spaceID, err)
	}
	var extra []string
	if err := db.Model(&Belief{}).Distinct("character_name").Where("space_id = ?", spaceID).Pluck("character_name", &extra).Error; err != nil {
		return nil, fmt.Errorf("models: search %s: %w", spaceID, err)
	}
	for _, c := range extra {
		if !slices.Contains(chars, c) {
			chars = append(chars, c)
		}
	}
	byItem := map[string]*SpaceHit{}
	itemTerms := map[string]map[string]bool{}
	for _, c := range chars {
		hits, err := s.RecallHits(ctx, RecallSearch{SpaceID: spaceID, Character: c, Terms: terms, PerTerm: limit})
		if err != nil {
			return nil, fmt.Errorf("models: search %s: %w", spaceID, err)
		}
		for _, h := range hits {
			it, ok := byItem[h.ID]
			if !ok {
				kind := RecallPerception
				if h.Kind == recall.Belief {
					kind = RecallBelief
				}
				it = &SpaceHit{ItemID: h.ID, Kind: kind, Character: FitName(c, NameSize)}
				byItem[h.ID], itemTerms[h.ID] = it, map[string]bool{}
			}
			if !itemTerms[h.ID][h.Term] {
				itemTerms[h.ID][h.Term] = true
				it.Matched++
			}
		}
	}
	out := make([]SpaceHit, 0, len(byItem))
	for _, it := range byItem {
		out = append(out, *it)
	}
	// Ids are ULIDs: a larger one was written later.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Matched != out[j].Matched {
			return out[i].Matched > out[j].Matched
		}
		return out[i].ItemID > out[j].ItemID
	})
	out = out[:min(len(out), limit)]
	var pids, bids []string
	for _, h := range out {
		if h.Kind == RecallBelief {
			bids = append(bids, h.ItemID)
		} else {
			pids = append(pids, h.ItemID)
		}
	}
	ps, err := s.PerceptionsByID(ctx, pids)
	if err != nil {
		return nil, err
	}
	bs, err := s.BeliefsByID(ctx, bids)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, h := range out {
		if p, ok := ps[h.ItemID]; ok {
			h.ChatID, h.Seq, h.Text = p.ChatID, p.Seq, p.Text
		} else if b, ok := bs[h.ItemID]; ok {
			h.Seq, h.Text = b.ChangedSeq, b.Text
		} else {
			continue
		}
		kept = append(kept, h)
	}
	return kept, nil
}

// BeliefsByID reads the beliefs with the given ids.
func (s *Store) BeliefsByID(ctx context.Context, ids []string) (map[string]Belief, error) {
	out := map[string]Belief{}
	for part := range slices.Chunk(ids, 500) {
		var bs []Belief
		if err := s.db.WithContext(ctx).Where("id IN ?", part).Find(&bs).Error; err != nil {
			return nil, fmt.Errorf("models: beliefs: %w", err)
		}
		for _, b := range bs {
			out[b.ID] = b
		}
	}
	return out, nil
}

// Handbooks reads the handbooks of a space's cards, by card, for search:
// one row per card.
func (s *Store) Handbooks(ctx context.Context, spaceID string) ([]Handbook, error) {
	var hs []Handbook
	if err := s.db.WithContext(ctx).Where("space_id = ?", spaceID).Order("card_id").Find(&hs).Error; err != nil {
		return nil, fmt.Errorf("models: handbooks of %s: %w", spaceID, err)
	}
	return hs, nil
}

// SpaceCharacters lists up to limit characters of a space, cast first,
// then by name.
func (s *Store) SpaceCharacters(ctx context.Context, spaceID string, limit int) ([]Character, error) {
	var cs []Character
	if err := s.db.WithContext(ctx).Where("space_id = ?", spaceID).Order("CASE kind WHEN 'cast' THEN 0 WHEN 'player' THEN 1 ELSE 2 END, name").Limit(limit).Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("models: characters of %s: %w", spaceID, err)
	}
	return cs, nil
}
