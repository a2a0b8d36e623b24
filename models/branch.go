package models

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"
)

// Branch is the live part of a chat's branch as one character perceived
// it: the active summary of its view (if any) and the messages after the
// one that summary covers through that it perceived, oldest first.
type Branch struct {
	Summary   *Summary  `json:"summary"`
	Uncovered []Message `json:"uncovered"`
	// Walk holds the id of every message the walk passed, oldest first,
	// perceived or not: the branch's order, which the view's messages
	// alone do not give. Its length is the walk's cost.
	Walk []string `json:"walk"`
}

// branchSQL walks back from a head along parent links and stops at the first
// message some summary of the character covers through: O(the messages
// since that point), never O(history). %[1]s is the summary test, %[2]s the
// presence test; for the whole chat (no character) both are true.
//
// A character's summary is one listing it in summary_members, or one with
// no member rows (older databases, one-card chats) whose last message the
// character perceived; a character perceived a message that has no
// presence rows (stored before presence was) or a perceived row of its own.
const branchSQL = `
WITH RECURSIVE branch(id, parent_id, depth, summary_id, seen) AS (
  SELECT m.id, m.parent_id, 0,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id AND %[1]s ORDER BY s.id DESC LIMIT 1), %[2]s
  FROM messages m WHERE m.id = @head
  UNION ALL
  SELECT m.id, m.parent_id, b.depth + 1,
         (SELECT s.id FROM summaries s WHERE s.covers_through_id = m.id AND %[1]s ORDER BY s.id DESC LIMIT 1), %[2]s
  FROM messages m JOIN branch b ON m.id = b.parent_id
  WHERE b.summary_id IS NULL AND b.depth < @max
)
SELECT b.depth AS depth, b.summary_id AS summary_id, b.seen AS seen, m.id AS id, m.chat_id AS chat_id, m.parent_id AS parent_id,
       m.role AS role, m.author_id AS author_id, m.author_name AS author_name,
       CASE WHEN b.seen THEN m.content ELSE '' END AS content,
       m.prompt_tokens AS prompt_tokens, m.completion_tokens AS completion_tokens,
       m.speaker_card_id AS speaker_card_id, m.whisper_to AS whisper_to, m.created_at AS created_at,
       s.chat_id AS s_chat_id, s.content AS s_content, s.beats AS s_beats, s.created_at AS s_created_at
FROM branch b JOIN messages m ON m.id = b.id LEFT JOIN summaries s ON s.id = b.summary_id
ORDER BY b.depth DESC`

const (
	perceivedSQL = `(NOT EXISTS (SELECT 1 FROM message_presences p WHERE p.message_id = m.id)
     OR EXISTS (SELECT 1 FROM message_presences p WHERE p.message_id = m.id AND p.character_name = @who AND p.perceived))`
	memberSQL = `(EXISTS (SELECT 1 FROM summary_members sm WHERE sm.summary_id = s.id AND sm.character_name = @who)
     OR (NOT EXISTS (SELECT 1 FROM summary_members sm WHERE sm.summary_id = s.id) AND ` + perceivedSQL + `))`
)

var (
	chatBranchSQL = fmt.Sprintf(branchSQL, "1 = 1", "1 = 1")
	viewBranchSQL = fmt.Sprintf(branchSQL, memberSQL, perceivedSQL)
)

// MaxBranchWalk bounds how far back a branch walk goes without a summary.
const MaxBranchWalk = 100000

// LoadBranch returns the active summary and the uncovered messages of the
// branch that ends at headID, for the whole chat: the newest summary on
// the branch, whoever it belongs to. A one-card chat's view is the whole
// chat; a scene's members load theirs with LoadView. An empty headID gives
// an empty branch.
func (s *Store) LoadBranch(ctx context.Context, headID string) (Branch, error) {
	return s.LoadView(ctx, headID, "")
}

// LoadView returns the branch ending at headID as the character named
// character perceived it: the walk stops at the first message a summary of
// its own covers through and keeps only the messages it perceived (see
// branchSQL); "" is the whole chat (LoadBranch). It is one query, and the
// messages the character missed after its summary cost a row each, their
// text not read.
func (s *Store) LoadView(ctx context.Context, headID, character string) (Branch, error) {
	var br Branch
	if headID == "" {
		return br, nil
	}
	br, err := walkBranch(s.db.WithContext(ctx), headID, character)
	if err != nil {
		return br, fmt.Errorf("models: load branch at %s: %w", headID, err)
	}
	return br, nil
}

// walkBranch runs branchSQL from headID on db for character ("" for the
// whole chat): the branch, with its active summary read in the same
// statement. The rows are scanned by hand: GORM's reflection cost more
// than the query itself.
func walkBranch(db *gorm.DB, headID, character string) (br Branch, err error) {
	q, args := chatBranchSQL, map[string]any{"head": headID, "max": MaxBranchWalk}
	if character != "" {
		q = viewBranchSQL
		args["who"] = FitName(character, NameSize)
	}
	rows, err := db.Raw(q, args).Rows()
	if err != nil {
		return br, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			depth int
			sid   sql.NullString
			seen  bool
			m     Message
			sum   struct {
				chat, content sql.NullString
				beats         sql.NullInt64
				created       sql.NullTime
			}
		)
		if err := rows.Scan(&depth, &sid, &seen, &m.ID, &m.ChatID, &m.ParentID, &m.Role, &m.AuthorID, &m.AuthorName, &m.Content,
			&m.PromptTokens, &m.CompletionTokens, &m.SpeakerCardID, &m.WhisperTo, &m.CreatedAt,
			&sum.chat, &sum.content, &sum.beats, &sum.created); err != nil {
			return br, err
		}
		if sid.Valid {
			if !sum.chat.Valid {
				// Deleted between the walk and the join: not in a
				// statement's snapshot, but said rather than assumed.
				return br, fmt.Errorf("load summary %s: %w", sid.String, ErrNotFound)
			}
			br.Summary = &Summary{ID: sid.String, ChatID: sum.chat.String, CoversThroughID: m.ID, Content: sum.content.String,
				Beats: int(sum.beats.Int64), CreatedAt: sum.created.Time}
			continue
		}
		br.Walk = append(br.Walk, m.ID)
		if seen {
			br.Uncovered = append(br.Uncovered, m)
		}
	}
	return br, rows.Err()
}

// SummaryID is the id of the branch's active summary; "" when none.
func (b Branch) SummaryID() string {
	if b.Summary == nil {
		return ""
	}
	return b.Summary.ID
}

// OnWalk reports whether id is among the messages the branch's walk
// passed (after its summary).
func (b Branch) OnWalk(id string) bool {
	for _, w := range b.Walk {
		if w == id {
			return true
		}
	}
	return false
}

// forkReach is how many of a message's ancestors OnBranch looks for on
// the branch: a /regen forks one or two messages above the one it
// replaced.
const forkReach = 32

// onBranchSQL walks back from @head along parent links and stops at the
// first message in @stop (the message sought and its nearest ancestors):
// the message is on the branch if and only if the walk stops at it, since
// it comes before its ancestors on any branch that holds it.
const onBranchSQL = `
WITH RECURSIVE up(id, parent_id, depth) AS (
  SELECT m.id, m.parent_id, 0 FROM messages m WHERE m.id = ?
  UNION ALL
  SELECT m.id, m.parent_id, u.depth + 1 FROM messages m JOIN up u ON m.id = u.parent_id
  WHERE u.id NOT IN (%s) AND u.depth < ?
)
SELECT id FROM up ORDER BY depth DESC LIMIT 1`

// ancestorsSQL lists a message and its ancestors, nearest first.
const ancestorsSQL = `
WITH RECURSIVE up(id, parent_id, depth) AS (
  SELECT m.id, m.parent_id, 0 FROM messages m WHERE m.id = ?
  UNION ALL
  SELECT m.id, m.parent_id, u.depth + 1 FROM messages m JOIN up u ON m.id = u.parent_id
  WHERE u.depth < ?
)
SELECT id FROM up ORDER BY depth`

// OnBranch reports whether the message id is on the branch that ends at
// headID: false when a /regen replaced it (or one before it) with a
// sibling, when it is not stored, and when either id is "". It costs the
// messages from the head back to the point where the two branches meet,
// and is false (the careful answer) beyond MaxBranchWalk of them.
func (s *Store) OnBranch(ctx context.Context, headID, id string) (bool, error) {
	if headID == "" || id == "" {
		return false, nil
	}
	if headID == id {
		return true, nil
	}
	db := s.db.WithContext(ctx)
	var stop []string
	if err := db.Raw(ancestorsSQL, id, forkReach).Scan(&stop).Error; err != nil {
		return false, fmt.Errorf("models: ancestors of %s: %w", id, err)
	}
	if len(stop) == 0 {
		return false, nil
	}
	args := []any{headID}
	for _, a := range stop {
		args = append(args, a)
	}
	args = append(args, MaxBranchWalk)
	var met []string
	if err := db.Raw(fmt.Sprintf(onBranchSQL, placeholders(len(stop))), args...).Scan(&met).Error; err != nil {
		return false, fmt.Errorf("models: is %s on the branch at %s: %w", id, headID, err)
	}
	return len(met) == 1 && met[0] == id, nil
}
