package models

import (
	"context"
	"fmt"
	"time"
)

// LedgerView is one scene member's own ledger (DESIGN "Who sees what"): the
// chat's ledger as far as the recorder batches the member witnessed changed
// it (record.Ledger.Witness). The summaries, recaps and scene notes written
// for the member read it, never the chat's. A one-card chat has no rows:
// its card witnessed everything, and the chat's ledger is its view.
type LedgerView struct {
	ChatID    string    `gorm:"primaryKey;size:26" json:"chat_id"`
	Character string    `gorm:"column:character_name;primaryKey;size:200" json:"character"`
	Snapshot  string    `gorm:"type:text;not null" json:"snapshot"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TableName says whose ledgers the rows are.
func (LedgerView) TableName() string { return "ledger_views" }

// ViewLedgers returns the chat's member ledgers by character name; see
// MemberLedger for a member without one.
func (s *Store) ViewLedgers(ctx context.Context, chatID string) (map[string]string, error) {
	var rows []LedgerView
	if err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: ledger views of chat %s: %w", chatID, err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Character] = r.Snapshot
	}
	return out, nil
}

// MemberLedger is the ledger of cast member m's view of chat, given the
// chat's ledger and the views' rows (ViewLedgers): its own row; else, as no
// scene batch has written one for it yet, the chat's ledger for the chat's
// lead card (the chat was its own before it became a scene) and none for
// anyone else (a member that joined has witnessed nothing the ledger holds).
func MemberLedger(chat Chat, m CastMember, chatLedger string, views map[string]string) string {
	if v, ok := views[FitName(m.Name, NameSize)]; ok {
		return v
	}
	if m.CardID == chat.CardID {
		return chatLedger
	}
	return ""
}
