package models

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/usage"
)

// ModelUsage is the calls of one kind made to model endpoints on one day,
// summed over every process that shares the database: a turn's reply
// ("chat"), each memory job's scribe calls (compact, recap, consolidate,
// record, reflect, belief_check, reorganize), embeddings and rerank.
// It holds counts only, no text of any chat.
type ModelUsage struct {
	// Day is the local date, YYYY-MM-DD.
	Day              string `gorm:"primaryKey;size:10" json:"day"`
	Kind             string `gorm:"primaryKey;size:32" json:"kind"`
	Calls            int64  `gorm:"not null;default:0" json:"calls"`
	Failures         int64  `gorm:"not null;default:0" json:"failures"`
	PromptTokens     int64  `gorm:"not null;default:0" json:"prompt_tokens"`
	CompletionTokens int64  `gorm:"not null;default:0" json:"completion_tokens"`
}

// AddModelUsage adds rows to the stored counts, in one statement per row
// that increments what another process may have written meanwhile.
func (s *Store) AddModelUsage(ctx context.Context, rows []usage.Row) error {
	if len(rows) == 0 {
		return nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, r := range rows {
			u := ModelUsage{Day: r.Day, Kind: FitName(r.Kind, 32), Calls: int64(r.Calls), Failures: int64(r.Failures),
				PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens}
			add := func(col string) clause.Assignment {
				return clause.Assignment{Column: clause.Column{Name: col}, Value: gorm.Expr("model_usages." + col + " + excluded." + col)}
			}
			err := tx.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "day"}, {Name: "kind"}},
				DoUpdates: clause.Set{add("calls"), add("failures"), add("prompt_tokens"), add("completion_tokens")},
			}).Create(&u).Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("models: add model usage: %w", err)
	}
	return nil
}

// ModelUsageOn lists the calls of day (YYYY-MM-DD) by kind, the most
// called first.
func (s *Store) ModelUsageOn(ctx context.Context, day string) ([]ModelUsage, error) {
	var out []ModelUsage
	if err := s.db.WithContext(ctx).Where("day = ?", day).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: model usage of %s: %w", day, err)
	}
	slices.SortFunc(out, func(a, b ModelUsage) int {
		if a.Calls != b.Calls {
			return int(b.Calls - a.Calls)
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out, nil
}
