package models

import (
	"strings"

	"gorm.io/gorm"
)

// forgetRecord deletes, inside ForgetChat's transaction, everything of the
// chat's record, by provenance: its events, perceptions, presence, threads,
// the knowledge edges it granted, every relationship description it wrote
// or updated (deleted, not edited: its wording may carry the chat), the
// recall index entries, vectors, kept recall blocks and diagnostics of the
// chat, the kept blocks and diagnostics of any chat that show its
// perceptions (or, for diagnostics, a belief drawn from it), the background
// characters it introduced, and the entities it introduced that nothing
// else mentions. No model is asked.
func forgetRecord(tx *gorm.DB, chat Chat) error {
	if err := forgetBeliefs(tx, chat); err != nil {
		return err
	}
	// Other chats' prompts may show the chat's perceptions in kept recall
	// blocks.
	if err := unkeepShowing(tx, tx.Model(&Perception{}).Select("id").Where("chat_id = ?", chat.ID)); err != nil {
		return err
	}
	// So may other chats' recall diagnostics: every one that names an item
	// whose words came from the chat goes whole (/why would show them).
	if err := forgetDiagnostics(tx, nil, chat.ID); err != nil {
		return err
	}
	// The recall index's entries go by their perceptions' ids (the index
	// keeps none of the chat; see RecallTerm.ChatID), so before those.
	if err := tx.Where("item_id IN (?)", tx.Model(&Perception{}).Select("id").Where("chat_id = ?", chat.ID)).Delete(&RecallTerm{}).Error; err != nil {
		return err
	}
	for _, m := range []any{&Event{}, &Perception{}, &Presence{}, &Thread{}, &Knowledge{}, &CastMember{}, &RecallOwed{}, &RecallKept{}, &RecallKeptItem{},
		&RecallDiagnosticItem{}, &RecallDiagnostic{}, &RecallVector{}} {
		if err := tx.Where("chat_id = ?", chat.ID).Delete(m).Error; err != nil {
			return err
		}
	}
	if err := tx.Where("space_id = ? AND (chat_id = ? OR chats LIKE ?)", chat.SpaceID, chat.ID, "%"+chat.ID+"%").
		Delete(&Relationship{}).Error; err != nil {
		return err
	}
	if err := forgetBackground(tx, chat); err != nil {
		return err
	}
	var ents []Entity
	if err := tx.Where("chat_id = ?", chat.ID).Find(&ents).Error; err != nil {
		return err
	}
	for _, e := range ents {
		used, err := entityMentioned(tx, e)
		if err != nil {
			return err
		}
		if !used {
			if err := tx.Where("id = ?", e.ID).Delete(&Entity{}).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// forgetBackground deletes the background characters the chat introduced
// that nothing left in the space mentions (another chat's ledger, an event
// of theirs, a relationship); one still mentioned passes to the chat that
// mentions it, so forgetting that chat later removes it.
func forgetBackground(tx *gorm.DB, chat Chat) error {
	var chars []Character
	if err := tx.Where("chat_id = ? AND kind = ?", chat.ID, CharacterBackground).Find(&chars).Error; err != nil {
		return err
	}
	for _, c := range chars {
		other, err := mentionedBy(tx, chat, c.Name)
		if err != nil {
			return err
		}
		q := tx.Where("id = ?", c.ID)
		if other == "" {
			err = q.Delete(&Character{}).Error
		} else {
			err = q.Model(&Character{}).Update("chat_id", other).Error
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mentionedBy returns a chat of the space, other than the forgotten one,
// whose ledger, events or relationships name the character; "" when none.
func mentionedBy(tx *gorm.DB, chat Chat, name string) (string, error) {
	var ids []string
	pattern := "%" + escapeLike(name) + "%"
	queries := []*gorm.DB{
		tx.Model(&Ledger{}).Where("chat_id IN (?) AND snapshot LIKE ?",
			tx.Model(&Chat{}).Select("id").Where("space_id = ? AND id <> ?", chat.SpaceID, chat.ID), pattern),
		tx.Model(&LedgerView{}).Where("chat_id IN (?) AND snapshot LIKE ?",
			tx.Model(&Chat{}).Select("id").Where("space_id = ? AND id <> ?", chat.SpaceID, chat.ID), pattern),
		tx.Model(&Event{}).Where("space_id = ? AND chat_id <> ? AND (actor = ? OR about LIKE ?)", chat.SpaceID, chat.ID, name, pattern),
		tx.Model(&Relationship{}).Where("space_id = ? AND chat_id <> ? AND (from_name = ? OR to_name = ?)", chat.SpaceID, chat.ID, name, name),
	}
	for _, q := range queries {
		if err := q.Limit(1).Pluck("chat_id", &ids).Error; err != nil || len(ids) > 0 {
			return firstOf(ids), err
		}
	}
	return "", nil
}

func firstOf(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// entityMentioned reports whether anything left in the space (after the
// forgotten chat's rows are gone) mentions e: a knowledge edge, an entity
// within it, an event about it.
func entityMentioned(tx *gorm.DB, e Entity) (bool, error) {
	var n int64
	if err := tx.Model(&Knowledge{}).Where("entity_id = ?", e.ID).Count(&n).Error; err != nil || n > 0 {
		return n > 0, err
	}
	if err := tx.Model(&Entity{}).Where("space_id = ? AND within = ?", e.SpaceID, e.Name).Count(&n).Error; err != nil || n > 0 {
		return n > 0, err
	}
	err := tx.Model(&Event{}).Where("space_id = ? AND about LIKE ?", e.SpaceID, "%"+escapeLike(e.Name)+"%").Count(&n).Error
	return n > 0, err
}

// escapeLike turns a name into a LIKE pattern; its own wildcards match more
// (never less), so a mentioned entity is always kept.
func escapeLike(s string) string {
	return strings.ReplaceAll(s, "_", "%")
}
