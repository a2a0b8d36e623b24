package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"troupe/handbook"

	"gorm.io/gorm"
)

// ForgetChat deletes a chat and everything only it supports, in one
// transaction that holds the chat's lock and the (card, space) lock of
// every card it cast, the locks every memory write takes (see locks.go),
// so none lands during or after it: its messages, summaries, every cast
// card's recap, memory chunks, ledger and job records, keeping a
// tombstone; for each of those cards, the reasons recorded for its jobs in
// the space are cleared, as they may quote the chat's text, the manifest
// keeps the merged hash so the next consolidation sees the deletion, and
// the handbook and resident are rewritten without the chat at once (the old versions
// are rewritten too, not kept in history, so no text of the chat remains). On SQLite the
// deleted text is overwritten (secure_delete) and the WAL checkpointed and
// truncated after the transaction. It returns the tombstone, or
// ErrNotFound when there is no such chat.
func (s *Store) ForgetChat(ctx context.Context, chatID string) (Tombstone, error) {
	now := s.now()
	var ts Tombstone
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		chat, err := s.lockChatForForget(tx, chatID)
		if errors.Is(err, ErrChatGone) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		cards, err := chatCards(tx, chat)
		if err != nil {
			return err
		}
		keys := []MemoryKey{spaceBeliefs(chat.SpaceID)}
		for _, c := range cards {
			keys = append(keys, MemoryKey{c, chat.SpaceID})
		}
		if err := s.lockMemory(tx, keys...); err != nil {
			return err
		}
		s.paused("forget")
		ts = Tombstone{ChatID: chat.ID, CardID: chat.CardID, SpaceID: chat.SpaceID, DeletedAt: now}
		if err := tx.Create(&ts).Error; err != nil {
			return err
		}
		ts.Cards = cards
		for _, del := range []struct {
			model any
			where string
		}{
			{&Message{}, "chat_id = ?"}, {&Summary{}, "chat_id = ?"}, {&SummaryMember{}, "chat_id = ?"}, {&Recap{}, "chat_id = ?"},
			{&MemoryChunk{}, "chat_id = ?"}, {&Ledger{}, "chat_id = ?"}, {&LedgerView{}, "chat_id = ?"}, {&ChatLore{}, "chat_id = ?"}, {&JobRecord{}, "key = ?"}, {&Chat{}, "id = ?"},
		} {
			if err := tx.Where(del.where, chatID).Delete(del.model).Error; err != nil {
				return err
			}
		}
		if err := forgetRecord(tx, chat); err != nil {
			return err
		}
		if err := tx.Model(&Channel{}).Where("current_chat_id = ?", chatID).Update("current_chat_id", "").Error; err != nil {
			return err
		}
		for _, card := range cards {
			if err := forgetChatOfCard(tx, chatID, MemoryKey{card, chat.SpaceID}, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return ts, err
		}
		return ts, fmt.Errorf("models: forget chat %s: %w", chatID, err)
	}
	s.checkpoint(ctx, "forget chat "+chatID)
	return ts, nil
}

// chatCards lists every card the chat ever cast (removed members too),
// its own card first: each keeps memory of the chat in the chat's space.
func chatCards(tx *gorm.DB, chat Chat) ([]string, error) {
	var cast []string
	if err := tx.Model(&CastMember{}).Where("chat_id = ?", chat.ID).Order("position").Pluck("card_id", &cast).Error; err != nil {
		return nil, err
	}
	cards := []string{chat.CardID}
	for _, c := range cast {
		if c != chat.CardID {
			cards = append(cards, c)
		}
	}
	return cards, nil
}

// forgetChatOfCard removes, inside ForgetChat's transaction, what a card's
// memory in a space keeps of a forgotten chat: the reasons of its jobs
// (they may quote the chat), its manifest entry but for the merged hash
// the next consolidation needs to see the deletion, and what
// its handbook, resident and their history say of the chat.
func forgetChatOfCard(tx *gorm.DB, chatID string, key MemoryKey, now time.Time) error {
	if err := clearJobReasons(tx, key); err != nil {
		return err
	}
	// The pairs a reorganize judged different are hashes of handbook
	// wording, some of it the forgotten chat's: they go with it (the next
	// reorganize may ask about a pair again, which costs little).
	if err := tx.Model(&ReorganizeState{}).Where("card_id = ? AND space_id = ? AND judged <> ''", key.CardID, key.SpaceID).
		Update("judged", "").Error; err != nil {
		return err
	}
	// The manifest keeps only ids and hashes: enough to see the deletion.
	q := tx.Where("card_id = ? AND space_id = ? AND chat_id = ?", key.CardID, key.SpaceID, chatID)
	if err := q.Session(&gorm.Session{}).Where("merged_hash = ''").Delete(&ManifestEntry{}).Error; err != nil {
		return err
	}
	if err := tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ? AND chat_id = ?", key.CardID, key.SpaceID, chatID).
		Updates(map[string]any{"recap_hash": "", "chat_name": "", "updated_at": now}).Error; err != nil {
		return err
	}
	return purgeMemory(tx, key, chatID, now)
}

// clearJobReasons clears the reasons recorded for the memory jobs of a
// card in a space: a refused consolidation's reason may quote a line.
func clearJobReasons(tx *gorm.DB, key MemoryKey) error {
	return tx.Model(&JobRecord{}).Where("key = ? AND reason <> ''", MemoryJobKey(key.CardID, key.SpaceID)).
		Update("reason", ReasonCleared).Error
}

// withoutChat is the one purge of a chat from a card's memory text
// (handbook.Forget): the chat's block and every entry tagged with it.
func withoutChat(chatID string) func(hb, rs string) (string, string) {
	return func(hb, rs string) (string, string) {
		return handbook.Forget(hb, chatID), handbook.Forget(rs, chatID)
	}
}

// purgeMemory rewrites a card's handbook and resident in a space without
// the chat, in place (the old versions are not kept), and every version in
// their history the same way.
func purgeMemory(tx *gorm.DB, key MemoryKey, chatID string, now time.Time) error {
	purge := withoutChat(chatID)
	cur, err := loadMemory(tx, key.CardID, key.SpaceID)
	if err != nil {
		return err
	}
	hb, rs := purge(cur.Handbook, cur.Resident)
	if err := upsertText(tx, &Handbook{CardID: cur.CardID, SpaceID: cur.SpaceID, Content: hb, UpdatedAt: now}, hb); err != nil {
		return err
	}
	if err := upsertText(tx, &ResidentSummary{CardID: cur.CardID, SpaceID: cur.SpaceID, Content: rs, UpdatedAt: now}, rs); err != nil {
		return err
	}
	// History may hold older versions that mention the chat: rewrite
	// them the same way.
	var hist []MemoryHistory
	if err := tx.Where("card_id = ? AND space_id = ?", key.CardID, key.SpaceID).Find(&hist).Error; err != nil {
		return err
	}
	for _, h := range hist {
		var text string
		if h.Kind == "handbook" {
			text, _ = purge(h.Content, "")
		} else {
			_, text = purge("", h.Content)
		}
		if text == h.Content {
			continue
		}
		if err := tx.Model(&MemoryHistory{}).Where("id = ?", h.ID).Update("content", text).Error; err != nil {
			return err
		}
	}
	return nil
}

// Tombstone returns a forgotten chat's tombstone, or ErrNotFound.
func (s *Store) Tombstone(ctx context.Context, chatID string) (Tombstone, error) {
	var t Tombstone
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Take(&t).Error
	return t, notFound(err)
}
