package models

import (
	"context"
	"fmt"
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
       m.prompt_tokens AS prompt_tokens, m.completion_tokens AS completion_tokens, m.created_at AS created_at
FROM branch b JOIN messages m ON m.id = b.id
ORDER BY b.depth DESC`

type branchRow struct {
	Depth     int
	SummaryID *string
	Message
}

// MaxBranchWalk bounds how far back a branch walk goes without a summary.
const MaxBranchWalk = 100000

// LoadBranch returns the active summary and the uncovered messages of the
// branch that ends at headID. An empty headID gives an empty branch.
func (s *Store) LoadBranch(ctx context.Context, headID string) (Branch, error) {
	var br Branch
	if headID == "" {
		return br, nil
	}
	var rows []branchRow
	if err := s.db.WithContext(ctx).Raw(branchSQL, headID, MaxBranchWalk).Scan(&rows).Error; err != nil {
		return br, fmt.Errorf("models: load branch at %s: %w", headID, err)
	}
	for _, r := range rows {
		if r.SummaryID != nil {
			var sum Summary
			if err := s.db.WithContext(ctx).Where("id = ?", *r.SummaryID).Take(&sum).Error; err != nil {
				return br, fmt.Errorf("models: load summary %s: %w", *r.SummaryID, notFound(err))
			}
			br.Summary = &sum
			continue
		}
		br.Uncovered = append(br.Uncovered, r.Message)
	}
	return br, nil
}
