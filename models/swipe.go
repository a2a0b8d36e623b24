package models

import (
	"context"
	"fmt"
)

// maxAlternatives bounds the alternatives of one reply that Alternatives
// lists; /swipe never writes more than that many (bot.MaxSwipes).
const maxAlternatives = 100

// Alternatives lists the replies that stand in the same place as m, the
// oldest first: the stored character messages that share m's parent (for
// a chat's opening, the chat's other openings), m among them. Each /regen
// or /swipe left one; only the head's is on the branch. Refused and user
// messages are none.
func (s *Store) Alternatives(ctx context.Context, m Message) ([]Message, error) {
	var out []Message
	err := s.db.WithContext(ctx).
		Where("chat_id = ? AND parent_id = ? AND role = ? AND refused = ?", m.ChatID, m.ParentID, "assistant", false).
		Order("created_at, id").Limit(maxAlternatives).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: alternatives of %s: %w", m.ID, err)
	}
	return out, nil
}

// MoveHead makes to, a stored message of the chat, its head, if the head
// is still expectHead (ErrStale otherwise): a swipe back to an earlier
// alternative. Nothing is deleted; the branch, and with it every view,
// summary and the recorder's batch, follows the new head.
func (s *Store) MoveHead(ctx context.Context, chatID, expectHead, to string) error {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Model(&Message{}).Where("id = ? AND chat_id = ?", to, chatID).Count(&n).Error; err != nil {
		return fmt.Errorf("models: move head of chat %s: %w", chatID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	res := db.Model(&Chat{}).Where("id = ? AND head_id = ?", chatID, expectHead).Update("head_id", to)
	if res.Error != nil {
		return fmt.Errorf("models: move head of chat %s: %w", chatID, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrStale
	}
	return nil
}
