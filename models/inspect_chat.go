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

// HasSummaries reports whether any relay summary of the chat is stored:
// without one, no branch walk can find an active summary, and a page need
// not walk a long chat to learn it.
func (s *Store) HasSummaries(ctx context.Context, chatID string) (bool, error) {
	var ids []string
	if err := s.db.WithContext(ctx).Model(&Summary{}).Where("chat_id = ?", chatID).Limit(1).Pluck("id", &ids).Error; err != nil {
		return false, fmt.Errorf("models: summaries of chat %s: %w", chatID, err)
	}
	return len(ids) > 0, nil
}

// summaryWalkSQL is branchSQL reduced to its stop: it walks back from
// @head to the first message a summary of the view covers through and
// returns that summary's id, reading no message text and no presence on
// the way (%[1]s is the summary test). A chat whose summaries are all far
// back costs a walk of ids, not of texts.
const summaryWalkSQL = `
WITH RECURSIVE branch(id, parent_id, depth, summary_id) AS (
  SELECT m.id, m.parent_id, 0,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id AND %[1]s ORDER BY s.id DESC LIMIT 1)
  FROM messages m WHERE m.id = @head
  UNION ALL
  SELECT m.id, m.parent_id, b.depth + 1,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id AND %[1]s ORDER BY s.id DESC LIMIT 1)
  FROM messages m JOIN branch b ON m.id = b.parent_id
  WHERE b.summary_id IS NULL AND b.depth < @max
)
SELECT summary_id FROM branch WHERE summary_id IS NOT NULL`

var (
	chatSummaryWalkSQL = fmt.Sprintf(summaryWalkSQL, "1 = 1")
	viewSummaryWalkSQL = fmt.Sprintf(summaryWalkSQL, memberSQL)
)

// PageSummaries returns what ActiveSummaries does — the summaries the
// chat's branch holds now, one per member's view in a scene, oldest first
// — for a page: with no summary stored it reads nothing more, and its walks
// carry ids only.
func (s *Store) PageSummaries(ctx context.Context, chat Chat) ([]SummaryView, error) {
	if chat.HeadID == "" {
		return nil, nil
	}
	if has, err := s.HasSummaries(ctx, chat.ID); err != nil || !has {
		return nil, err
	}
	members, err := s.SummaryMembers(ctx, chat.ID)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, ms := range members {
		for _, m := range ms {
			names[m] = true
		}
	}
	db := s.db.WithContext(ctx)
	var ids []string
	seen := map[string]bool{}
	walk := func(q string, args map[string]any) error {
		var found []string
		if err := db.Raw(q, args).Scan(&found).Error; err != nil {
			return fmt.Errorf("models: summaries of chat %s: %w", chat.ID, err)
		}
		for _, id := range found {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return nil
	}
	if len(names) == 0 {
		if err := walk(chatSummaryWalkSQL, map[string]any{"head": chat.HeadID, "max": MaxBranchWalk}); err != nil {
			return nil, err
		}
	}
	for n := range names {
		if err := walk(viewSummaryWalkSQL, map[string]any{"head": chat.HeadID, "max": MaxBranchWalk, "who": n}); err != nil {
			return nil, err
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var sums []Summary
	if err := db.Where("id IN ?", ids).Find(&sums).Error; err != nil {
		return nil, fmt.Errorf("models: summaries of chat %s: %w", chat.ID, err)
	}
	out := make([]SummaryView, 0, len(sums))
	for _, sm := range sums {
		out = append(out, SummaryView{ID: sm.ID, ChatID: chat.ID, CoversThroughID: sm.CoversThroughID, Members: members[sm.ID],
			Beats: sm.Beats, Content: sm.Content, CreatedAt: sm.CreatedAt})
	}
	sortSummaryViews(out)
	return out, nil
}
