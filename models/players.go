package models

import (
	"context"
	"fmt"
)

// PresentAt names everyone present at a message: the cast members and the
// players its presence rows list, perceiving it or not (a player carried
// past a whisper is still in the scene). A message stored before presence
// was written has none.
func (s *Store) PresentAt(ctx context.Context, messageID string) ([]string, error) {
	var names []string
	err := s.db.WithContext(ctx).Model(&Presence{}).Where("message_id = ?", messageID).
		Order("character_name").Pluck("character_name", &names).Error
	if err != nil {
		return nil, fmt.Errorf("models: presence at message %s: %w", messageID, err)
	}
	return names, nil
}

// Author is someone who wrote user messages in a chat, under a name.
type Author struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ChatAuthors lists the authors of a chat's user messages (refused ones
// left out), the one who wrote last first, once per id and name: one who
// wrote under two display names is listed under both.
func (s *Store) ChatAuthors(ctx context.Context, chatID string) ([]Author, error) {
	var out []Author
	err := s.db.WithContext(ctx).Model(&Message{}).
		Select("author_id AS id, author_name AS name").
		Where("chat_id = ? AND role = ? AND refused = ?", chatID, "user", false).
		Group("author_id, author_name").Order("MAX(id) DESC").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: authors of chat %s: %w", chatID, err)
	}
	return out, nil
}

// Personas returns the personas stored for userKeys, by key; a key without
// one is missing from the map.
func (s *Store) Personas(ctx context.Context, userKeys []string) (map[string]Persona, error) {
	out := map[string]Persona{}
	if len(userKeys) == 0 {
		return out, nil
	}
	var rows []Persona
	if err := s.db.WithContext(ctx).Where("user_key IN ?", userKeys).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: personas: %w", err)
	}
	for _, p := range rows {
		out[p.UserKey] = p
	}
	return out, nil
}
