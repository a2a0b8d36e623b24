package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"troupe/text"
)

// reopenCandidates bounds the empty chats ReopenEmptyChat looks at: the
// newest few of the channel's card, enough for any switching back and
// forth.
const reopenCandidates = 8

// ReopenEmptyChat makes the newest chat of the channel in spaceID that
// holds no player's message yet (its openings at most), and whose cast is
// cardIDs in that order with nobody removed or away, the channel's current
// chat again. It returns the chat and its cast rows, or ErrNotFound when
// there is none: the caller starts a chat instead. A chat someone wrote in,
// even a message refused for its length, is never taken up again.
func (s *Store) ReopenEmptyChat(ctx context.Context, channelID, spaceID string, cardIDs []string) (Chat, []CastMember, error) {
	if len(cardIDs) == 0 {
		return Chat{}, nil, ErrNotFound
	}
	var chat Chat
	var cast []CastMember
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		written := tx.Model(&Message{}).Select("1").Where("messages.chat_id = chats.id AND messages.role = ?", "user")
		var found []Chat
		if err := tx.Where("channel_id = ? AND space_id = ? AND card_id = ? AND NOT EXISTS (?)", channelID, spaceID, text.FitID(cardIDs[0], IDSize), written).
			Order("id DESC").Limit(reopenCandidates).Find(&found).Error; err != nil {
			return err
		}
		for _, c := range found {
			rows, err := castOf(tx, c.ID)
			if err != nil {
				return err
			}
			if !castIs(rows, cardIDs) {
				continue
			}
			chat, cast = c, rows
			return tx.Model(&Channel{}).Where("id = ?", channelID).
				Updates(map[string]any{"current_chat_id": c.ID, "card_id": c.CardID, "updated_at": s.now()}).Error
		}
		return ErrNotFound
	})
	if errors.Is(err, ErrNotFound) {
		return Chat{}, nil, ErrNotFound
	}
	if err != nil {
		return Chat{}, nil, fmt.Errorf("models: reopen an empty chat in %s: %w", channelID, err)
	}
	return chat, cast, nil
}

// castIs reports whether rows' members in the cast are cardIDs, in order,
// none of them away.
func castIs(rows []CastMember, cardIDs []string) bool {
	active := ActiveCast(rows)
	if len(active) != len(cardIDs) {
		return false
	}
	for i, m := range active {
		if m.Away || m.CardID != text.FitID(cardIDs[i], IDSize) {
			return false
		}
	}
	return true
}
