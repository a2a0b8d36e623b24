package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/belief"
)

// ReflectionCandidate is a character of a space, its kind and how many
// perceptions it received that no reflection has shown yet.
type ReflectionCandidate struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	CardID string `json:"card_id"`
	New    int    `json:"new"`
}

// notSeen picks a character's perceptions no reflection has shown. It is
// read through idx_perception_unseen, so that the check whether a
// reflection is due costs the new perceptions, not the whole story (with
// the marks in reflection_seen alone it read every perception of the space:
// 36 ms at 15k, on every check).
const notSeen = "mode <> 'none' AND perceptions.reflected = false"

// ReflectionCandidates lists the characters of the space with new
// perceptions; a name the space's characters do not know is background.
func (s *Store) ReflectionCandidates(ctx context.Context, spaceID string) ([]ReflectionCandidate, error) {
	db := s.db.WithContext(ctx)
	var rows []struct {
		CharacterName string
		N             int
	}
	if err := db.Model(&Perception{}).Select("character_name, COUNT(*) AS n").
		Where("space_id = ? AND "+notSeen, spaceID).Group("character_name").Order("character_name").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: reflection candidates: %w", err)
	}
	var chars []Character
	if err := db.Where("space_id = ?", spaceID).Find(&chars).Error; err != nil {
		return nil, fmt.Errorf("models: reflection candidates: %w", err)
	}
	kind, card := map[string]string{}, map[string]string{}
	for _, c := range chars {
		kind[c.Name], card[c.Name] = c.Kind, c.CardID
	}
	out := make([]ReflectionCandidate, 0, len(rows))
	for _, r := range rows {
		k := kind[r.CharacterName]
		if k == "" {
			k = CharacterBackground
		}
		out = append(out, ReflectionCandidate{Name: r.CharacterName, Kind: k, CardID: card[r.CharacterName], New: r.N})
	}
	return out, nil
}

// ReflectionRound is what one character's reflection starts from: its new
// perceptions in turn order and its beliefs.
type ReflectionRound struct {
	// New are the character's oldest perceptions no reflection has seen
	// yet, at most the limit LoadReflection was given.
	New []belief.Perception `json:"new"`
	// Beliefs are all the character's beliefs without their evidence
	// (Evidence nil): a round checks a few and shows at most
	// belief.DefaultPromptBeliefs, and reads the evidence of those alone
	// with BeliefEvidence. Reading every belief's links (12,000 rows for
	// 115 beliefs in troupe bench) was most of the round's reads.
	Beliefs []belief.Belief `json:"beliefs"`
	// Known are the character's most recent perceptions, new or not (at
	// most MaxKnownPerceptions): they only tell which words are rare.
	Known []belief.Perception `json:"known"`
}

// MaxKnownPerceptions bounds the perceptions read to tell rare words.
const MaxKnownPerceptions = 500

// LoadReflection reads a character's new perceptions, the oldest limit of
// them (all when limit ≤ 0), and its beliefs. A request shows only so
// many; reading a long unreflected backlog whole (a story recorded before
// reflection was turned on) held the database for every run.
func (s *Store) LoadReflection(ctx context.Context, spaceID, character string, limit int) (ReflectionRound, error) {
	db := s.db.WithContext(ctx)
	var rows []struct {
		ID, Text, About string
		Seq             int64
		Importance      int
		Pivotal         bool
	}
	q := db.Table("perceptions").Select("perceptions.id, perceptions.text, perceptions.seq, perceptions.importance, events.pivotal, events.about").
		Joins("LEFT JOIN events ON events.id = perceptions.event_id").
		Where("perceptions.space_id = ? AND perceptions.character_name = ? AND perceptions."+notSeen, spaceID, character).
		Order("perceptions.seq, perceptions.id")
	if limit > 0 {
		q = q.Limit(limit)
	}
	err := q.Scan(&rows).Error
	if err != nil {
		return ReflectionRound{}, fmt.Errorf("models: load reflection: %w", err)
	}
	var r ReflectionRound
	for _, p := range rows {
		r.New = append(r.New, belief.Perception{ID: p.ID, Turn: p.Seq, Text: p.Text, Importance: p.Importance,
			Pivotal: p.Pivotal, About: lines(p.About)})
	}
	var known []struct{ ID, Text, About string }
	err = db.Table("perceptions").Select("perceptions.id, perceptions.text, events.about").
		Joins("LEFT JOIN events ON events.id = perceptions.event_id").
		Where("perceptions.space_id = ? AND perceptions.character_name = ?", spaceID, character).
		Order("perceptions.seq DESC").Limit(MaxKnownPerceptions).Scan(&known).Error
	if err != nil {
		return ReflectionRound{}, fmt.Errorf("models: load reflection: %w", err)
	}
	for _, p := range known {
		r.Known = append(r.Known, belief.Perception{ID: p.ID, Text: p.Text, About: lines(p.About)})
	}
	beliefs, err := beliefRows(db, "space_id = ? AND character_name = ?", spaceID, character)
	if err != nil {
		return ReflectionRound{}, err
	}
	for _, b := range beliefs {
		r.Beliefs = append(r.Beliefs, beliefOf(b, nil))
	}
	return r, nil
}

// ReflectionState reads a chat's last reflection; the zero state when it
// never reflected.
func (s *Store) ReflectionState(ctx context.Context, chatID string) (ReflectionState, error) {
	var st ReflectionState
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Take(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ReflectionState{ChatID: chatID}, nil
	}
	return st, err
}

// SaveReflectionState records a chat's reflection run.
func (s *Store) SaveReflectionState(ctx context.Context, st ReflectionState) error {
	st.UpdatedAt = s.now()
	st.Place = FitName(st.Place, NameSize)
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chat_id"}}, UpdateAll: true}).Create(&st).Error
}

// ChatScene is where a chat's story stands for reflection's triggers: its
// number of recorded turns, the ledger's place, the story day, and what the
// space's places are within.
type ChatScene struct {
	Chat   Chat              `json:"chat"`
	Turns  int64             `json:"turns"`
	Place  string            `json:"place"`
	Day    int               `json:"day"`
	Within map[string]string `json:"within"`
}

// ReflectionScene reads a chat's scene. ErrNotFound when there is no chat.
func (s *Store) ReflectionScene(ctx context.Context, chatID string) (ChatScene, error) {
	db := s.db.WithContext(ctx)
	var sc ChatScene
	if err := db.Where("id = ?", chatID).Take(&sc.Chat).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return sc, ErrNotFound
		}
		return sc, err
	}
	var agg struct {
		Turns int64
		Day   int
	}
	if err := db.Model(&Event{}).Select("COUNT(DISTINCT seq) AS turns, COALESCE(MAX(day), 0) AS day").
		Where("chat_id = ? AND sealed = ?", chatID, true).Scan(&agg).Error; err != nil {
		return sc, err
	}
	sc.Turns, sc.Day = agg.Turns, agg.Day
	var l Ledger
	if err := db.Where("chat_id = ?", chatID).Limit(1).Find(&l).Error; err != nil {
		return sc, err
	}
	var snap struct {
		Place string `json:"place"`
	}
	if l.Snapshot != "" && json.Unmarshal([]byte(l.Snapshot), &snap) == nil {
		sc.Place = snap.Place
	}
	var ents []Entity
	if err := db.Select("name, within").Where("space_id = ? AND within <> ''", sc.Chat.SpaceID).Find(&ents).Error; err != nil {
		return sc, err
	}
	sc.Within = make(map[string]string, len(ents))
	for _, e := range ents {
		sc.Within[e.Name] = e.Within
	}
	return sc, nil
}
