package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// AppendRefused stores m, a user message no prompt could hold, as a child of
// parentID without moving the chat's head: it stays in the chat's tree for
// the record while every branch walk, prompt and compaction passes it by.
// It returns ErrDuplicate if m's dedup key was already stored, ErrNotFound
// if the chat is gone, and a TooLongError for a field over its column.
func (s *Store) AppendRefused(ctx context.Context, chatID, parentID string, m *Message) error {
	m.ID = NewID()
	m.ChatID = chatID
	m.ParentID = parentID
	m.Refused = true
	m.CreatedAt = s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Chat{}).Where("id = ?", chatID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		return tx.Create(m).Error
	})
	switch {
	case err == nil, errors.Is(err, ErrNotFound):
		return err
	case errors.Is(err, gorm.ErrDuplicatedKey) || isUniqueViolation(err):
		return ErrDuplicate
	}
	return fmt.Errorf("models: store refused message in chat %s: %w", chatID, err)
}

// RefusedMessages lists the chat's refused messages, oldest first.
func (s *Store) RefusedMessages(ctx context.Context, chatID string) ([]Message, error) {
	var msgs []Message
	err := s.db.WithContext(ctx).Where("chat_id = ? AND refused", chatID).Order("id").Find(&msgs).Error
	if err != nil {
		return nil, fmt.Errorf("models: refused messages of chat %s: %w", chatID, err)
	}
	return msgs, nil
}
