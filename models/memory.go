package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// InstallSummary stores a relay summary covering the chat's branch through
// coversThroughID, in one transaction that first checks the chat has not
// moved under the scribe: coversThroughID must still be on the branch of the
// chat's head, and the active summary there must still be prevSummaryID
// ("" for none). Otherwise it returns ErrStale and writes nothing. It holds
// the chat's lock (see locks.go), and returns ErrChatGone when the chat was
// forgotten.
func (s *Store) InstallSummary(ctx context.Context, chatID, prevSummaryID, coversThroughID, content string, beats int) (Summary, error) {
	sum := Summary{ID: NewID(), ChatID: chatID, CoversThroughID: coversThroughID, Content: content, Beats: beats, CreatedAt: s.now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		chat, err := s.lockChat(tx, chatID)
		if err != nil {
			return err
		}
		br, err := walkBranch(tx, chat.HeadID, "")
		if err != nil {
			return err
		}
		if br.SummaryID() != prevSummaryID || !br.OnWalk(coversThroughID) {
			return ErrStale
		}
		s.paused("install summary")
		return tx.Create(&sum).Error
	})
	if err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrChatGone) {
			return Summary{}, err
		}
		return Summary{}, fmt.Errorf("models: install summary for chat %s: %w", chatID, err)
	}
	return sum, nil
}

// ChatSummaries lists every summary of a chat, oldest first.
func (s *Store) ChatSummaries(ctx context.Context, chatID string) ([]Summary, error) {
	var out []Summary
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Order("id").Find(&out).Error
	return out, err
}

// Ledger returns a chat's ledger snapshot, or "" when it has none.
func (s *Store) Ledger(ctx context.Context, chatID string) (string, error) {
	var l Ledger
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Take(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return l.Snapshot, err
}

// RecordJob stores the outcome of a memory job for its key. A failure
// increments the failure count; anything else resets it. Either clears the
// retry time, which SetJobRetry sets.
func (s *Store) RecordJob(ctx context.Context, r JobRecord) error {
	r.UpdatedAt = s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old JobRecord
		err := tx.Where("kind = ? AND key = ?", r.Kind, r.Key).Take(&old).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if r.Outcome == "failed" {
			r.Failures = old.Failures + 1
		}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "kind"}, {Name: "key"}},
			DoUpdates: clause.AssignmentColumns([]string{"outcome", "reason", "product", "failures", "updated_at", "retry_at"}),
		}).Create(&r).Error
	})
}

// MemoryJobKey is the job table key of the jobs of a card's memory in a
// space (consolidation).
func MemoryJobKey(cardID, spaceID string) string { return cardID + "|" + spaceID }

// ReasonCleared replaces the reasons recorded for a card and space's jobs
// when one of its chats is forgotten: a reason may quote the chat's text.
const ReasonCleared = "reason cleared: a chat of this card and space was forgotten"

// Job returns the last recorded outcome of a job, or ErrNotFound.
func (s *Store) Job(ctx context.Context, kind, key string) (JobRecord, error) {
	var r JobRecord
	err := s.db.WithContext(ctx).Where("kind = ? AND key = ?", kind, key).Take(&r).Error
	return r, notFound(err)
}

// ActiveChatsSince returns the chats active since the Unix time since, most
// recent first,
// at most limit of them.
func (s *Store) ActiveChatsSince(ctx context.Context, since int64, limit int) ([]Chat, error) {
	var chats []Chat
	err := s.db.WithContext(ctx).Where("active_at >= ?", unixTime(since)).Order("active_at DESC").Limit(limit).Find(&chats).Error
	return chats, err
}
