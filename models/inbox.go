package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// InboxMessage is a platform message accepted for a channel and not yet
// stored in its chat. A message is written here before its process waits
// for the channel (its lane or the cross-process lock), so that nothing
// accepted lives only in memory; the turn that stores it in the chat
// deletes it in the same write. Rows left by a process that died are
// answered by the next turn of the channel or by Resume at start.
type InboxMessage struct {
	ID        string `gorm:"primaryKey;size:26" json:"id"`
	ChannelID string `gorm:"size:128;not null;index" json:"channel_id"`
	Platform  string `gorm:"size:16;not null;index" json:"platform"`
	// Ref is the channel's reference as the pipeline needs it to answer
	// without the platform event (JSON, opaque to the store).
	Ref        string  `gorm:"type:text;not null" json:"ref"`
	AuthorID   string  `gorm:"size:64" json:"author_id"`
	AuthorName string  `gorm:"size:200" json:"author_name"`
	Content    string  `gorm:"type:text;not null" json:"content"`
	DedupKey   *string `gorm:"size:200;uniqueIndex" json:"dedup_key"`
	// Addressed are the names the platform resolved as the message's
	// addressees beside its text (a reply to a character's message), one
	// per line. They travel with the row: the turn that stores it may run
	// in another process, or before the message's own call reaches its
	// channel's lane.
	Addressed string    `gorm:"type:text;not null;default:''" json:"addressed"`
	CreatedAt time.Time `json:"created_at"`
}

// Accept stores m in the inbox, filling in its id and time. It returns
// false (and stores nothing) when a message with the same dedup key is
// already waiting there.
func (s *Store) Accept(ctx context.Context, m *InboxMessage) (bool, error) {
	m.ID = NewID()
	m.CreatedAt = s.now()
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(m)
	if res.Error != nil {
		return false, fmt.Errorf("models: accept message for %s: %w", m.ChannelID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Inbox returns the messages waiting for the channel, oldest first.
func (s *Store) Inbox(ctx context.Context, channelID string) ([]InboxMessage, error) {
	var out []InboxMessage
	err := s.db.WithContext(ctx).Where("channel_id = ?", channelID).Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: inbox of %s: %w", channelID, err)
	}
	return out, nil
}

// InboxChannels returns, for each channel of platform with messages
// waiting since before before, its oldest waiting message.
func (s *Store) InboxChannels(ctx context.Context, platform string, before time.Time) ([]InboxMessage, error) {
	var rows []InboxMessage
	err := s.db.WithContext(ctx).Where("platform = ? AND created_at < ?", platform, before).Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: inbox of %s: %w", platform, err)
	}
	seen := map[string]bool{}
	var out []InboxMessage
	for _, r := range rows {
		if !seen[r.ChannelID] {
			seen[r.ChannelID] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// DropInbox deletes waiting messages by id (ones already stored in their
// chat under their dedup key).
func (s *Store) DropInbox(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.db.WithContext(ctx).Where("id IN ?", ids).Delete(&InboxMessage{}).Error; err != nil {
		return fmt.Errorf("models: drop inbox messages: %w", err)
	}
	return nil
}

// ReviseInbox replaces the text of the waiting message with dedupKey from
// authorID. It reports whether one was waiting.
func (s *Store) ReviseInbox(ctx context.Context, dedupKey, authorID, text string) (bool, error) {
	res := s.db.WithContext(ctx).Model(&InboxMessage{}).Where("dedup_key = ? AND author_id = ?", dedupKey, authorID).Update("content", text)
	if res.Error != nil {
		return false, fmt.Errorf("models: revise waiting message: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// Unanswered is a channel whose current chat ends on a user message that
// has no reply: the process answering it stopped in between.
type Unanswered struct {
	ChannelID string `json:"channel_id"`
	// External is the channel's platform id; SpaceKind and SpaceExternal
	// are its space's kind and platform id.
	External, SpaceKind, SpaceExternal string
	// AuthorID and AuthorName are the unanswered message's.
	AuthorID, AuthorName string
}

// UnansweredChannels lists the channels of platform whose current chat,
// active since since, ends on a user message.
func (s *Store) UnansweredChannels(ctx context.Context, platform string, since time.Time) ([]Unanswered, error) {
	rows, err := s.db.WithContext(ctx).Raw(`SELECT ch.id, ch.external_id, sp.kind, sp.external_id, m.author_id, m.author_name
FROM chats c
JOIN channels ch ON ch.id = c.channel_id AND ch.current_chat_id = c.id
JOIN spaces sp ON sp.id = ch.space_id
JOIN messages m ON m.id = c.head_id
WHERE c.active_at >= ? AND ch.platform = ? AND m.role = 'user'
ORDER BY c.active_at`, since, platform).Rows()
	if err != nil {
		return nil, fmt.Errorf("models: unanswered chats of %s: %w", platform, err)
	}
	defer rows.Close()
	var out []Unanswered
	for rows.Next() {
		var u Unanswered
		if err := rows.Scan(&u.ChannelID, &u.External, &u.SpaceKind, &u.SpaceExternal, &u.AuthorID, &u.AuthorName); err != nil {
			return nil, fmt.Errorf("models: unanswered chats of %s: %w", platform, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Consume is Append for a turn's accepted messages: it stores msgs under
// the chat's head expectHead and deletes the inbox rows they came from
// (inboxIDs), in one write. It returns ErrStale when the head moved or any
// of those rows is gone (another process stored them), ErrDuplicate when a
// dedup key is already stored, and changes nothing then.
func (s *Store) Consume(ctx context.Context, chatID, expectHead string, msgs []*Message, inboxIDs []string) error {
	return s.appendMessages(ctx, chatID, expectHead, expectHead, msgs, inboxIDs)
}

// dropConsumed deletes the inbox rows a write stores in a chat, inside its
// transaction; it fails with ErrStale when one of them is already gone.
func dropConsumed(tx *gorm.DB, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	res := tx.Where("id IN ?", ids).Delete(&InboxMessage{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ids)) {
		return ErrStale
	}
	return nil
}
