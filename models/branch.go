package models

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"
)

// Branch is the live part of a chat's branch: the active summary (if any) and
// the messages after the one it covers through, oldest first.
type Branch struct {
	Summary   *Summary
	Uncovered []Message
}

// branchSQL walks back from a head along parent links and stops at the first
// message some summary covers through: O(uncovered), never O(history).
const branchSQL = `
WITH RECURSIVE branch(id, parent_id, depth, summary_id) AS (
  SELECT m.id, m.parent_id, 0,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id ORDER BY s.id DESC LIMIT 1)
  FROM messages m WHERE m.id = ?
  UNION ALL
  SELECT m.id, m.parent_id, b.depth + 1,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id ORDER BY s.id DESC LIMIT 1)
  FROM messages m JOIN branch b ON m.id = b.parent_id
  WHERE b.summary_id IS NULL AND b.depth < ?
)
SELECT b.depth AS depth, b.summary_id AS summary_id, m.id AS id, m.chat_id AS chat_id, m.parent_id AS parent_id,
       m.role AS role, m.author_id AS author_id, m.author_name AS author_name, m.content AS content,
       m.prompt_tokens AS prompt_tokens, m.completion_tokens AS completion_tokens, m.created_at AS created_at,
       m.speaker_card_id AS speaker_card_id, m.whisper_to AS whisper_to
FROM branch b JOIN messages m ON m.id = b.id
ORDER BY b.depth DESC`

// MaxBranchWalk bounds how far back a branch walk goes without a summary.
const MaxBranchWalk = 100000

// LoadBranch returns the active summary and the uncovered messages of the
// branch that ends at headID. An empty headID gives an empty branch.
func (s *Store) LoadBranch(ctx context.Context, headID string) (Branch, error) {
	var br Branch
	if headID == "" {
		return br, nil
	}
	summaryID, msgs, err := walkBranch(s.db.WithContext(ctx), headID)
	if err != nil {
		return br, fmt.Errorf("models: load branch at %s: %w", headID, err)
	}
	br.Uncovered = msgs
	if summaryID != "" {
		var sum Summary
		if err := s.db.WithContext(ctx).Where("id = ?", summaryID).Take(&sum).Error; err != nil {
			return br, fmt.Errorf("models: load summary %s: %w", summaryID, notFound(err))
		}
		br.Summary = &sum
	}
	return br, nil
}

// walkBranch runs branchSQL from headID on db: the id of the active summary
// ("" for none) and the uncovered messages, oldest first. The rows are
// scanned by hand: GORM's reflection cost more than the query itself.
func walkBranch(db *gorm.DB, headID string) (summaryID string, msgs []Message, err error) {
	rows, err := db.Raw(branchSQL, headID, MaxBranchWalk).Rows()
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			depth int
			sid   sql.NullString
			m     Message
		)
		if err := rows.Scan(&depth, &sid, &m.ID, &m.ChatID, &m.ParentID, &m.Role, &m.AuthorID, &m.AuthorName, &m.Content,
			&m.PromptTokens, &m.CompletionTokens, &m.CreatedAt, &m.SpeakerCardID, &m.WhisperTo); err != nil {
			return "", nil, err
		}
		if sid.Valid {
			summaryID = sid.String
			continue
		}
		msgs = append(msgs, m)
	}
	return summaryID, msgs, rows.Err()
}
