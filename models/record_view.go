package models

import (
	"context"
	"fmt"
)

// KnownThing is a knowledge edge with its entity, for display.
type KnownThing struct {
	Character string `json:"character"`
	Entity    string `json:"entity"`
	Kind      string `json:"kind"`
	ChatID    string `json:"chat_id"`
	EventID   string `json:"event_id"`
}

// RecordView is the record of a card's chats in a space, and the space's
// characters, relationships and knowledge, for `troupe memory show`.
type RecordView struct {
	Characters []Character `json:"characters"`
	// Perceptions maps each character to its perceptions, oldest first.
	Perceptions   map[string][]Perception `json:"perceptions"`
	Threads       []Thread                `json:"threads"`
	Relationships []Relationship          `json:"relationships"`
	Knowledge     []KnownThing            `json:"knowledge"`
	Ledgers       []Ledger                `json:"ledgers"`
	// LedgerViews are the scene members' own ledgers.
	LedgerViews []LedgerView `json:"ledger_views"`
	Events      int64        `json:"events"`
	Unsealed    int64        `json:"unsealed_events"`
	// Runs is the last recorder run of each chat: written (with the items
	// it dropped and why), skipped, or failed and owed.
	Runs []JobRecord `json:"recorder_runs"`
}

// RecordView reads the record of cardID's chats in spaceID.
func (s *Store) RecordView(ctx context.Context, cardID, spaceID string) (RecordView, error) {
	v := RecordView{Perceptions: map[string][]Perception{}}
	db := s.db.WithContext(ctx)
	chats := db.Model(&Chat{}).Select("id").Where("card_id = ? AND space_id = ?", cardID, spaceID)
	var ps []Perception
	steps := []func() error{
		func() error { return db.Where("space_id = ?", spaceID).Order("name").Find(&v.Characters).Error },
		func() error { return db.Where("chat_id IN (?)", chats).Order("seq, id").Find(&ps).Error },
		func() error { return db.Where("chat_id IN (?)", chats).Order("id").Find(&v.Threads).Error },
		func() error {
			return db.Where("space_id = ?", spaceID).Order("from_name, to_name").Find(&v.Relationships).Error
		},
		func() error {
			return db.Table("knowledge_edges k").Select("k.character_name AS character, e.name AS entity, e.kind AS kind, k.chat_id AS chat_id, k.event_id AS event_id").
				Joins("JOIN entities e ON e.id = k.entity_id").Where("k.space_id = ?", spaceID).Order("k.character_name, e.name").Scan(&v.Knowledge).Error
		},
		func() error { return db.Where("chat_id IN (?)", chats).Order("chat_id").Find(&v.Ledgers).Error },
		func() error {
			return db.Where("chat_id IN (?)", chats).Order("chat_id, character_name").Find(&v.LedgerViews).Error
		},
		func() error { return db.Model(&Event{}).Where("chat_id IN (?)", chats).Count(&v.Events).Error },
		func() error {
			return db.Model(&Event{}).Where("chat_id IN (?) AND sealed = ?", chats, false).Count(&v.Unsealed).Error
		},
		func() error {
			return db.Where("kind = ? AND key IN (?)", JobKindRecord, chats).Order("updated_at DESC").Find(&v.Runs).Error
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return v, fmt.Errorf("models: record of %s in %s: %w", cardID, spaceID, err)
		}
	}
	for _, p := range ps {
		v.Perceptions[p.Character] = append(v.Perceptions[p.Character], p)
	}
	return v, nil
}

// JobKindRecord is the recorder's kind in the job table (memory.KindRecord).
const JobKindRecord = "record"

// RecordCounts is how much of a chat is recorded, for /memory.
type RecordCounts struct {
	Events, Unsealed, Perceptions, OpenThreads, Relationships, Knowledge int64
	// LastRun is the chat's last recorder run, "outcome: reason" (the
	// items it dropped and why); empty before the first.
	LastRun string `json:"last_run"`
}

const recordCountsSQL = `SELECT
 (SELECT COUNT(*) FROM events WHERE chat_id = ?),
 (SELECT COUNT(*) FROM events WHERE chat_id = ? AND sealed = ?),
 (SELECT COUNT(*) FROM perceptions WHERE chat_id = ?),
 (SELECT COUNT(*) FROM threads WHERE chat_id = ? AND open = ?),
 (SELECT COUNT(*) FROM relationships WHERE chat_id = ?),
 (SELECT COUNT(*) FROM knowledge_edges WHERE chat_id = ?),
 COALESCE((SELECT outcome || ': ' || COALESCE(reason, '') FROM job_records WHERE kind = ? AND key = ?), '')`

// RecordCounts counts a chat's record in one query.
func (s *Store) RecordCounts(ctx context.Context, chatID string) (RecordCounts, error) {
	var c RecordCounts
	err := s.db.WithContext(ctx).Raw(recordCountsSQL, chatID, chatID, false, chatID, chatID, true, chatID, chatID, JobKindRecord, chatID).Row().
		Scan(&c.Events, &c.Unsealed, &c.Perceptions, &c.OpenThreads, &c.Relationships, &c.Knowledge, &c.LastRun)
	if err != nil {
		return c, fmt.Errorf("models: record counts of chat %s: %w", chatID, err)
	}
	return c, nil
}
