package models

import (
	"context"
	"fmt"
	"time"
)

// OutcomeFailed is the outcome of a job record whose work failed and stays
// owed.
const OutcomeFailed = "failed"

// SetJobRetry records when a failed job of kind and key is tried again,
// leaving the record's time (the failure's) as it is. It does nothing when
// the job's last outcome is not a failure: a later run already settled it.
func (s *Store) SetJobRetry(ctx context.Context, kind, key string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&JobRecord{}).
		Where("kind = ? AND key = ? AND outcome = ?", kind, key, OutcomeFailed).
		UpdateColumn("retry_at", at).Error
	if err != nil {
		return fmt.Errorf("models: set retry of %s %s: %w", kind, key, err)
	}
	return nil
}

// FailedJobs returns the kind, key, failure count, time and next try of
// every job whose last outcome is a failure (not its reason).
func (s *Store) FailedJobs(ctx context.Context) ([]JobRecord, error) {
	var out []JobRecord
	err := s.db.WithContext(ctx).Select("kind", "key", "failures", "updated_at", "retry_at").Where("outcome = ?", OutcomeFailed).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: failed jobs: %w", err)
	}
	return out, nil
}

// FailingJobs returns the failed job records of a card's memory in a space,
// newest first: the one keyed spaceKey (its consolidation) and those of the
// card's chats in the space (their compactions and recaps).
func (s *Store) FailingJobs(ctx context.Context, cardID, spaceID, spaceKey string) ([]JobRecord, error) {
	var out []JobRecord
	chats := s.db.Model(&Chat{}).Select("id").Where("card_id = ? AND space_id = ?", cardID, spaceID)
	err := s.db.WithContext(ctx).Where("outcome = ? AND (key = ? OR key IN (?))", OutcomeFailed, spaceKey, chats).
		Order("updated_at DESC").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: failing jobs of %s in %s: %w", cardID, spaceID, err)
	}
	return out, nil
}

// FailingJobCounts counts the keys whose last job failed, by kind.
func (s *Store) FailingJobCounts(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Kind string
		N    int
	}
	err := s.db.WithContext(ctx).Model(&JobRecord{}).Select("kind, count(*) AS n").
		Where("outcome = ?", OutcomeFailed).Group("kind").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: count failing jobs: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Kind] = r.N
	}
	return out, nil
}
