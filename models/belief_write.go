package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/belief"
)

// ReflectionInstall is one character's finished reflection: the
// perceptions it showed, the beliefs its checks lowered and the
// contradictions they found, and the validated changes.
type ReflectionInstall struct {
	ChatID, CardID, SpaceID, Character string
	Seen                               []string        `json:"seen"`
	Doubted                            []belief.Belief `json:"doubted"`
	Changes                            belief.Changes  `json:"changes"`
	// Read is the evidence of the beliefs the run changes as it read them
	// (BeliefEvidence), by belief id. A changed belief whose links are
	// those read and more gets only the new ones written, and on SQLite
	// only those are looked up: every way a link goes (a forgotten chat or
	// perception, a deleted belief) deletes the belief, which the install
	// then finds gone (ErrStale). Reading and checking again all the links
	// of a long-held belief (thousands) was a third of a reflection's cost.
	// Without it, or when links were taken away, the stored links are made
	// those of the belief, read afresh.
	Read map[string][]belief.Evidence `json:"-"`
	// Partial says Read holds only each belief's links to the perceptions
	// the run showed (BeliefLinksTo): the install then only adds links to
	// the beliefs it changes, and refuses to take any away.
	Partial bool `json:"-"`
}

// InstallReflection installs one character's reflection in one
// transaction, under the chat's and the (card, space) locks like every
// memory install: check results, changes, folds and seen marks, or nothing.
// It returns ErrChatGone when the chat was forgotten and ErrStale when a
// perception it cites or a belief it changes is gone meanwhile.
func (s *Store) InstallReflection(ctx context.Context, r ReflectionInstall) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.lockChat(tx, r.ChatID); err != nil {
			return err
		}
		if err := s.lockMemory(tx, MemoryKey{r.CardID, r.SpaceID}, spaceBeliefs(r.SpaceID)); err != nil {
			return err
		}
		chats, err := s.citedChats(tx, r)
		if err != nil {
			return err
		}
		var already int64
		if err := tx.Model(&ReflectionSeen{}).Where("perception_id IN ?", append(r.Seen, "")).Count(&already).Error; err != nil {
			return err
		}
		if already > 0 {
			return ErrStale
		}
		s.paused("install reflection")
		if len(r.Changes.Deleted) > 0 {
			if err := deleteBeliefs(tx, r.Changes.Deleted); err != nil {
				return err
			}
		}
		for _, b := range r.Doubted {
			if err := writeBelief(tx, r, b, chats, ChangeCheck, now); err != nil {
				return err
			}
			for _, e := range b.Evidence {
				if e.Stance != belief.Contradicts {
					continue
				}
				if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&BeliefCheck{BeliefID: b.ID, PerceptionID: e.Perception,
					ChatID: chats[e.Perception], CreatedAt: now}).Error; err != nil {
					return err
				}
			}
		}
		for _, b := range r.Changes.Updated {
			if err := writeBelief(tx, r, b, chats, ChangeReflection, now); err != nil {
				return err
			}
		}
		for _, b := range r.Changes.Created {
			if err := writeBelief(tx, r, b, chats, ChangeFormed, now); err != nil {
				return err
			}
		}
		if err := foldInto(tx, r.Changes.Folded); err != nil {
			return err
		}
		// Plain inserts: a perception another run showed meanwhile (two
		// chats of a space reflecting the same character) fails this
		// install rather than forming its beliefs twice.
		seen := make([]ReflectionSeen, len(r.Seen))
		for i, id := range r.Seen {
			seen[i] = ReflectionSeen{PerceptionID: id, ChatID: chats[id]}
		}
		if len(seen) == 0 {
			return nil
		}
		if err := tx.CreateInBatches(seen, 200).Error; err != nil {
			return err
		}
		return markReflected(tx, r.Seen, true)
	})
	if err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrChatGone) {
			return err
		}
		return fmt.Errorf("models: install reflection for %s: %w", r.Character, err)
	}
	return nil
}

// foldInto marks folded perceptions with their belief: one statement per
// belief, not one per perception (a run folds up to a hundred).
func foldInto(tx *gorm.DB, folds []belief.Fold) error {
	byBelief := map[string][]string{}
	var order []string
	for _, f := range folds {
		if _, ok := byBelief[f.Belief]; !ok {
			order = append(order, f.Belief)
		}
		byBelief[f.Belief] = append(byBelief[f.Belief], f.Perception)
	}
	for _, b := range order {
		ids := byBelief[b]
		for start := 0; start < len(ids); start += 500 {
			if err := tx.Model(&Perception{}).Where("id IN ?", ids[start:min(start+500, len(ids))]).Update("folded_into", b).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// citedChats maps the perceptions the install writes links to (and those
// it marks seen) to their chats, and returns ErrStale when one is gone:
// its chat was forgotten before the install took the space's beliefs'
// lock (spaceBeliefs), which keeps every deletion of perceptions out until
// the install commits. The links a changed belief had when read (r.Read)
// are not looked up: had one of their perceptions gone, so would the
// belief, and its rewrite finds it gone.
func (s *Store) citedChats(tx *gorm.DB, r ReflectionInstall) (map[string]string, error) {
	want := map[string]bool{}
	cite := func(links []belief.Evidence) {
		for _, e := range links {
			want[e.Perception] = true
		}
	}
	for _, id := range r.Seen {
		want[id] = true
	}
	for _, b := range r.Changes.Created {
		cite(b.Evidence)
	}
	for _, bs := range [][]belief.Belief{r.Doubted, r.Changes.Updated} {
		for _, b := range bs {
			links, _ := gainedLinks(b, r.Read)
			cite(links)
		}
	}
	// A doubted belief's contradictions are all filed as checks.
	for _, b := range r.Doubted {
		for _, e := range b.Evidence {
			if e.Stance == belief.Contradicts {
				want[e.Perception] = true
			}
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	chats := make(map[string]string, len(ids))
	for part := range slices.Chunk(ids, 500) {
		rows, err := tx.Raw("SELECT id, chat_id FROM perceptions WHERE "+s.oneOf("id IN ?"), s.ids(part)).Rows()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, chat string
			if err := rows.Scan(&id, &chat); err != nil {
				rows.Close()
				return nil, err
			}
			chats[id] = chat
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	if len(chats) != len(ids) {
		return nil, ErrStale
	}
	return chats, nil
}

// gainedLinks is what the install writes of b's links: when b holds every
// link it had when read (r.Read) and more, only the new ones, and gained;
// else all of them.
func gainedLinks(b belief.Belief, read map[string][]belief.Evidence) (links []belief.Evidence, gained bool) {
	was, ok := read[b.ID]
	if !ok {
		return b.Evidence, false
	}
	old := make(map[belief.Evidence]bool, len(was))
	for _, e := range was {
		old[e] = true
	}
	kept := 0
	var added []belief.Evidence
	for _, e := range b.Evidence {
		switch on, had := old[e]; {
		case on:
			old[e] = false
			kept++
		case !had:
			added = append(added, e)
		}
	}
	if kept < len(old) {
		return b.Evidence, false
	}
	return added, true
}

// writeBelief inserts (why ChangeFormed) or rewrites a belief and its
// evidence links, and notes the step in its confidence history.
func writeBelief(tx *gorm.DB, r ReflectionInstall, b belief.Belief, chats map[string]string, why string, now time.Time) error {
	create := why == ChangeFormed
	row := Belief{ID: b.ID, SpaceID: r.SpaceID, Character: r.Character, Text: b.Text, Confidence: int(b.Confidence),
		About: strings.Join(b.About, "\n"), FormedSeq: b.FormedTurn, ChangedSeq: b.ChangedTurn,
		MergedFrom: strings.Join(b.MergedFrom, "\n"), CreatedAt: now, UpdatedAt: now}
	if err := indexBelief(tx, row); err != nil {
		return err
	}
	if !create {
		if err := dropStaleVector(tx, row); err != nil {
			return err
		}
	}
	if create {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
	} else {
		res := tx.Model(&Belief{}).Where("id = ?", b.ID).Updates(map[string]any{"text": row.Text, "confidence": row.Confidence,
			"about": row.About, "changed_seq": row.ChangedSeq, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrStale
		}
	}
	seq := b.ChangedTurn
	if create {
		seq = b.FormedTurn
	}
	step := BeliefChange{BeliefID: b.ID, Seq: seq, Confidence: row.Confidence, Why: why, CreatedAt: now}
	if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&step).Error; err != nil {
		return err
	}
	links, gained := b.Evidence, false
	if !create {
		links, gained = gainedLinks(b, r.Read)
	}
	if r.Partial && !create && !gained {
		// Rewriting links the run never read would delete them.
		return fmt.Errorf("models: belief %s: a run that read its links only in part may only add to them", b.ID)
	}
	ev := make([]BeliefEvidence, 0, len(links))
	for _, e := range links {
		ev = append(ev, BeliefEvidence{BeliefID: b.ID, PerceptionID: e.Perception, Stance: string(e.Stance), Seq: e.Turn, ChatID: chats[e.Perception]})
	}
	if !create && !gained {
		var err error
		if ev, err = changedEvidence(tx, b.ID, ev); err != nil {
			return err
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ev, 200).Error
}

// changedEvidence makes a rewritten belief's stored links those of want:
// it deletes the links want lacks or changes and returns the ones to
// insert. A belief's links only grow as reflection goes on, and rewriting
// them all each time made a long-held belief's every update cost hundreds
// of statements on the database's one writer.
func changedEvidence(tx *gorm.DB, beliefID string, want []BeliefEvidence) ([]BeliefEvidence, error) {
	var have []BeliefEvidence
	if err := tx.Where("belief_id = ?", beliefID).Find(&have).Error; err != nil {
		return nil, err
	}
	wanted := make(map[string]BeliefEvidence, len(want))
	for _, e := range want {
		if _, ok := wanted[e.PerceptionID]; !ok {
			wanted[e.PerceptionID] = e // the first, as the insert keeps it
		}
	}
	kept := make(map[string]bool, len(have))
	var drop []string
	for _, e := range have {
		if w, ok := wanted[e.PerceptionID]; ok && w.Stance == e.Stance && w.Seq == e.Seq && w.ChatID == e.ChatID {
			kept[e.PerceptionID] = true
			continue
		}
		drop = append(drop, e.PerceptionID)
	}
	for start := 0; start < len(drop); start += 500 {
		if err := tx.Where("belief_id = ? AND perception_id IN ?", beliefID, drop[start:min(start+500, len(drop))]).
			Delete(&BeliefEvidence{}).Error; err != nil {
			return nil, err
		}
	}
	out := want[:0:0]
	for _, e := range want {
		if !kept[e.PerceptionID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// deleteBeliefs deletes beliefs, their links and check marks and the kept
// recall blocks that show them, and unfolds the perceptions folded into
// them.
func deleteBeliefs(tx *gorm.DB, ids []string) error {
	if err := unkeepShowing(tx, ids); err != nil {
		return err
	}
	for _, m := range []any{&RecallTerm{}, &RecallVector{}} {
		if err := tx.Where("item_id IN ?", ids).Delete(m).Error; err != nil {
			return err
		}
	}
	for _, m := range []any{&BeliefEvidence{}, &BeliefCheck{}, &BeliefChange{}} {
		if err := tx.Where("belief_id IN ?", ids).Delete(m).Error; err != nil {
			return err
		}
	}
	if err := tx.Model(&Perception{}).Where("folded_into IN ?", ids).Update("folded_into", nil).Error; err != nil {
		return err
	}
	return tx.Where("id IN ?", ids).Delete(&Belief{}).Error
}

// markReflected sets the perceptions' reflected flag, the copy of their
// reflection_seen marks that notSeen reads.
func markReflected(tx *gorm.DB, ids []string, on bool) error {
	for part := range slices.Chunk(ids, 500) {
		if err := tx.Model(&Perception{}).Where("id IN ?", part).Update("reflected", on).Error; err != nil {
			return err
		}
	}
	return nil
}

// renew makes perceptions new again: no longer seen by a reflection.
func renew(tx *gorm.DB, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		if err := tx.Where("perception_id IN ?", part).Delete(&ReflectionSeen{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&Perception{}).Where("id IN ?", part).Updates(map[string]any{"folded_into": nil, "reflected": false}).Error; err != nil {
			return err
		}
	}
	return nil
}

// DeleteBelief removes one belief by hand (a GM's /belief forget, troupe
// memory belief delete): the perceptions it cited become new again. It
// returns the deleted belief, or ErrNotFound.
func (s *Store) DeleteBelief(ctx context.Context, id string) (Belief, error) {
	var b Belief
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&b).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return err
		}
		var cited []string
		if err := tx.Model(&BeliefEvidence{}).Where("belief_id = ?", id).Pluck("perception_id", &cited).Error; err != nil {
			return err
		}
		if err := deleteBeliefs(tx, []string{id}); err != nil {
			return err
		}
		// Forgotten by hand: no recall diagnostic keeps its words.
		if err := forgetDiagnostics(tx, []string{id}, ""); err != nil {
			return err
		}
		return renew(tx, cited)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("models: delete belief %s: %w", id, err)
	}
	return b, err
}

// forgetBeliefs runs in ForgetChat's transaction, before the chat's
// perceptions go: every belief citing one of them, for or against, and
// every belief merged from such a belief, is deleted (its wording may carry
// the chat); the other perceptions they cited become new again.
func forgetBeliefs(tx *gorm.DB, chat Chat) error {
	// The caller holds the space's beliefs' lock (spaceBeliefs): a
	// reflection install citing these perceptions committed before, and
	// one that comes later finds them gone.
	var forgotten []string
	if err := tx.Model(&Perception{}).Where("chat_id = ?", chat.ID).Pluck("id", &forgotten).Error; err != nil {
		return err
	}
	var chars []string
	if err := tx.Model(&Belief{}).Distinct("character_name").
		Where("space_id = ? AND id IN (SELECT belief_id FROM belief_evidence WHERE chat_id = ? UNION SELECT belief_id FROM belief_checks WHERE chat_id = ?)",
			chat.SpaceID, chat.ID, chat.ID).Pluck("character_name", &chars).Error; err != nil {
		return err
	}
	gone := make(map[string]bool, len(forgotten))
	for _, id := range forgotten {
		gone[id] = true
	}
	for _, c := range chars {
		views, err := loadBeliefs(tx, "space_id = ? AND character_name = ?", chat.SpaceID, c)
		if err != nil {
			return err
		}
		bs := make([]belief.Belief, len(views))
		for i, v := range views {
			bs[i] = v.Belief
		}
		f := belief.Forget(bs, gone)
		if len(f.Deleted) > 0 {
			if err := deleteBeliefs(tx, f.Deleted); err != nil {
				return err
			}
			// Their wording may carry the chat: so may the diagnostics
			// that show them, in any chat.
			if err := forgetDiagnostics(tx, f.Deleted, ""); err != nil {
				return err
			}
		}
		if err := renew(tx, f.Renewed); err != nil {
			return err
		}
	}
	for _, m := range []any{&BeliefEvidence{}, &BeliefCheck{}, &ReflectionSeen{}, &ReflectionState{}} {
		if err := tx.Where("chat_id = ?", chat.ID).Delete(m).Error; err != nil {
			return err
		}
	}
	return nil
}
