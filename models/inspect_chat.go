package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// TranscriptMessage is one message as the inspector's chat page shows it:
// with who was present at it (perceived it) and who was in the scene but
// did not hear it (a whisper's players carried past it).
type TranscriptMessage struct {
	Message
	Present []string `json:"present"`
	Unheard []string `json:"unheard"`
}

// Transcript is a page of a chat's branch, oldest first, and the messages
// that stand off the branch beside them: the replies a /regen or a swipe
// left, and refused user messages, each under the parent it shares with a
// message of the page.
type Transcript struct {
	Messages []TranscriptMessage `json:"messages"`
	// Off maps a parent id to the off-branch messages under it, oldest
	// first.
	Off map[string][]TranscriptMessage `json:"off"`
	// Earlier is the id of the message before the page's first on the
	// branch; "" when the page starts at the chat's beginning.
	Earlier string `json:"earlier"`
}

// maxTranscriptPage bounds a page of a transcript; maxOffBranch the
// off-branch messages read with it.
const (
	maxTranscriptPage = 500
	maxOffBranch      = 1000
)

// transcriptWalkSQL walks back from a message along parent links, at most
// @max messages: the cost is the page, never the chat's history.
const transcriptWalkSQL = `
WITH RECURSIVE up(id, parent_id, depth) AS (
  SELECT m.id, m.parent_id, 0 FROM messages m WHERE m.id = @from AND m.chat_id = @chat
  UNION ALL
  SELECT m.id, m.parent_id, u.depth + 1 FROM messages m JOIN up u ON m.id = u.parent_id
  WHERE u.depth + 1 < @max
)
SELECT m.* FROM up JOIN messages m ON m.id = up.id ORDER BY up.depth DESC`

// TranscriptPage reads up to n messages of chatID's branch that end at
// fromID (the chat's head for the newest page), with their presence and
// the off-branch messages beside them, in four bounded queries. It returns
// ErrNotFound when fromID is not a message of the chat.
func (s *Store) TranscriptPage(ctx context.Context, chatID, fromID string, n int) (Transcript, error) {
	var tr Transcript
	n = min(max(n, 1), maxTranscriptPage)
	if fromID == "" {
		return tr, nil
	}
	db := s.db.WithContext(ctx)
	var msgs []Message
	if err := db.Raw(transcriptWalkSQL, map[string]any{"from": fromID, "chat": chatID, "max": n}).Scan(&msgs).Error; err != nil {
		return tr, fmt.Errorf("models: transcript of chat %s: %w", chatID, err)
	}
	if len(msgs) == 0 {
		return tr, ErrNotFound
	}
	tr.Earlier = msgs[0].ParentID
	ids := make([]string, len(msgs))
	parents := make([]string, 0, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
		parents = append(parents, m.ParentID)
	}
	var off []Message
	if err := db.Where("chat_id = ? AND parent_id IN ? AND id NOT IN ?", chatID, parents, ids).
		Order("created_at, id").Limit(maxOffBranch).Find(&off).Error; err != nil {
		return tr, fmt.Errorf("models: transcript of chat %s: %w", chatID, err)
	}
	all := append(append([]string(nil), ids...), idsOf(off)...)
	var pres []Presence
	if err := db.Where("message_id IN ?", all).Order("character_name").Find(&pres).Error; err != nil {
		return tr, fmt.Errorf("models: transcript of chat %s: %w", chatID, err)
	}
	present, unheard := map[string][]string{}, map[string][]string{}
	for _, p := range pres {
		if p.Perceived {
			present[p.MessageID] = append(present[p.MessageID], p.Character)
		} else {
			unheard[p.MessageID] = append(unheard[p.MessageID], p.Character)
		}
	}
	with := func(m Message) TranscriptMessage {
		return TranscriptMessage{Message: m, Present: present[m.ID], Unheard: unheard[m.ID]}
	}
	for _, m := range msgs {
		tr.Messages = append(tr.Messages, with(m))
	}
	tr.Off = map[string][]TranscriptMessage{}
	for _, m := range off {
		tr.Off[m.ParentID] = append(tr.Off[m.ParentID], with(m))
	}
	return tr, nil
}

func idsOf(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// ChatPulse is what a live chat page watches: the chat's head and how many
// messages it holds. A turn, a /regen and a swipe each change one of them.
type ChatPulse struct {
	HeadID   string
	Messages int64
}

// ChatPulse reads the chat's pulse in one query; ErrNotFound when the chat
// is gone.
func (s *Store) ChatPulse(ctx context.Context, chatID string) (ChatPulse, error) {
	var p ChatPulse
	var head sql.NullString
	err := s.db.WithContext(ctx).Raw(`SELECT c.head_id, (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id) FROM chats c WHERE c.id = ?`, chatID).
		Row().Scan(&head, &p.Messages)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("models: pulse of chat %s: %w", chatID, err)
	}
	p.HeadID = head.String
	return p, nil
}

// ChatMessage returns the message with id if it belongs to chatID, or
// ErrNotFound.
func (s *Store) ChatMessage(ctx context.Context, chatID, id string) (Message, error) {
	var m Message
	err := s.db.WithContext(ctx).Where("id = ? AND chat_id = ?", id, chatID).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return m, ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("models: message %s: %w", id, err)
	}
	return m, nil
}
