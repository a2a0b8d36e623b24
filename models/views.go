package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// SummaryMember says a summary belongs to a cast member's view. A summary
// without member rows (older databases, one-card chats) belongs to every
// member that perceived its last message (see branchSQL).
type SummaryMember struct {
	SummaryID string `gorm:"primaryKey;size:26" json:"summary_id"`
	Character string `gorm:"column:character_name;primaryKey;size:200" json:"character"`
	ChatID    string `gorm:"size:26;not null;index" json:"chat_id"`
}

// TableName says what the rows hold.
func (SummaryMember) TableName() string { return "summary_members" }

// ViewSummary is one summary of a compaction that cuts every view of a
// scene at one message: the members whose views it continues, the summary
// they all had before (PrevID, "" for none) and the new text.
type ViewSummary struct {
	Members []string `json:"members"`
	PrevID  string   `json:"prev_id"`
	Content string   `json:"content"`
	Beats   int      `json:"beats"`
}

// InstallViews stores the summaries of one compaction of a scene, each
// covering its members' views through coversThroughID, with their member
// rows, in one transaction that first checks nothing moved under the
// scribe: coversThroughID must still be on the branch of the chat's head
// after each member's active summary, and that summary must still be the
// group's PrevID. Otherwise it returns ErrStale and writes nothing. It
// holds the chat's lock (see locks.go) and returns ErrChatGone when the
// chat was forgotten. The stored summaries come back in the order of vs.
func (s *Store) InstallViews(ctx context.Context, chatID, coversThroughID string, vs []ViewSummary) ([]Summary, error) {
	out := make([]Summary, 0, len(vs))
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		chat, err := s.lockChat(tx, chatID)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if len(v.Members) == 0 {
				return fmt.Errorf("a summary with no members")
			}
			for _, who := range v.Members {
				br, err := walkBranch(tx, chat.HeadID, who)
				if err != nil {
					return err
				}
				if br.SummaryID() != v.PrevID || !br.OnWalk(coversThroughID) {
					return ErrStale
				}
			}
		}
		s.paused("install summary")
		for _, v := range vs {
			sum := Summary{ID: NewID(), ChatID: chatID, CoversThroughID: coversThroughID, Content: v.Content, Beats: v.Beats, CreatedAt: s.now()}
			if err := tx.Create(&sum).Error; err != nil {
				return err
			}
			rows := make([]SummaryMember, len(v.Members))
			for i, who := range v.Members {
				rows[i] = SummaryMember{SummaryID: sum.ID, Character: FitName(who, NameSize), ChatID: chatID}
			}
			if err := tx.Create(&rows).Error; err != nil {
				return err
			}
			out = append(out, sum)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrChatGone) {
			return nil, err
		}
		return nil, fmt.Errorf("models: install view summaries for chat %s: %w", chatID, err)
	}
	return out, nil
}

// SummaryMembers lists the members of each of the chat's summaries that
// has member rows, by summary id.
func (s *Store) SummaryMembers(ctx context.Context, chatID string) (map[string][]string, error) {
	var rows []SummaryMember
	if err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Order("summary_id, character_name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: summary members of chat %s: %w", chatID, err)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.SummaryID] = append(out[r.SummaryID], r.Character)
	}
	return out, nil
}
