package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// ChatLore is a chat's macro and lorebook state as JSON: its {{setvar}}
// variables, its turn count and its entries' sticky and cooldown timers.
type ChatLore struct {
	ChatID    string    `gorm:"primaryKey;size:26" json:"chat_id"`
	State     string    `gorm:"type:text;not null" json:"state"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ChatLoreState returns the chat's stored lore state, or ErrNotFound.
func (s *Store) ChatLoreState(ctx context.Context, chatID string) (string, error) {
	var l ChatLore
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Take(&l).Error
	if err != nil {
		return "", fmt.Errorf("models: chat lore %s: %w", chatID, notFound(err))
	}
	return l.State, nil
}

// PutChatLoreState stores the chat's lore state.
func (s *Store) PutChatLoreState(ctx context.Context, chatID, state string) error {
	l := ChatLore{ChatID: chatID, State: state, UpdatedAt: s.now()}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "chat_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "updated_at"}),
	}).Create(&l).Error
	if err != nil {
		return fmt.Errorf("models: put chat lore %s: %w", chatID, err)
	}
	return nil
}
