package models

import (
	"context"
	"fmt"
	"time"
)

// ChatRow is a chat as the inspector's overview lists it: with its
// channel's platform and place.
type ChatRow struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CardID     string    `json:"card_id"`
	SpaceID    string    `json:"space_id"`
	ChannelID  string    `json:"channel_id"`
	Platform   string    `json:"platform"`
	ExternalID string    `json:"external_id"`
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"created_at"`
	ActiveAt   time.Time `json:"active_at"`
}

// RecentChats lists up to limit chats, the most recently active first,
// with their channels.
func (s *Store) RecentChats(ctx context.Context, limit int) ([]ChatRow, error) {
	var rows []ChatRow
	err := s.db.WithContext(ctx).Table("chats").
		Select("chats.id, chats.name, chats.card_id, chats.space_id, chats.channel_id, channels.platform, channels.external_id, channels.current_chat_id = chats.id AS current, chats.created_at, chats.active_at").
		Joins("JOIN channels ON channels.id = chats.channel_id").
		Order("chats.active_at DESC, chats.id DESC").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: recent chats: %w", err)
	}
	return rows, nil
}
