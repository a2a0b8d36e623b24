package models

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"troupe/belief"
)

// Belief is what a character has come to hold beyond single events, formed
// by reflection from its perceptions (seed 002). Beliefs span the chats of a
// space; their evidence links point back to the perceptions, and so the
// chats, they came from.
type Belief struct {
	ID        string `gorm:"primaryKey;size:26" json:"id"`
	SpaceID   string `gorm:"size:128;not null;index:idx_belief_character,priority:1" json:"space_id"`
	Character string `gorm:"column:character_name;size:200;not null;index:idx_belief_character,priority:2" json:"character"`
	Text      string `gorm:"type:text;not null" json:"text"`
	// Confidence is belief.Confidence: 1 doubtful, 2 likely, 3 sure.
	Confidence int `gorm:"not null" json:"confidence"`
	// About lists the characters and entities it is about, one a line.
	About string `gorm:"type:text;not null;default:''" json:"about"`
	// FormedSeq and ChangedSeq are space turns: the newest perception it
	// was formed from, and the newest it was last changed by.
	FormedSeq  int64 `gorm:"not null" json:"formed_seq"`
	ChangedSeq int64 `gorm:"not null" json:"changed_seq"`
	// MergedFrom lists the beliefs a merge replaced, one a line: forgetting
	// the evidence of any of them takes this one too.
	MergedFrom string `gorm:"type:text;not null;default:''" json:"merged_from"`
	// RecallCount counts how often its character recalled it.
	RecallCount int       `gorm:"not null;default:0" json:"recall_count"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// BeliefEvidence links a belief to a perception that supports or
// contradicts it. ChatID is the perception's chat, for forgetting.
type BeliefEvidence struct {
	BeliefID     string `gorm:"primaryKey;size:26" json:"belief_id"`
	PerceptionID string `gorm:"primaryKey;size:26;index" json:"perception_id"`
	Stance       string `gorm:"size:16;not null" json:"stance"`
	Seq          int64  `gorm:"not null" json:"seq"`
	ChatID       string `gorm:"size:26;not null;index" json:"chat_id"`
}

// BeliefCheck records that a belief check found a perception contradicting
// a belief, once: a retried run never lowers the belief twice for it.
type BeliefCheck struct {
	BeliefID     string    `gorm:"primaryKey;size:26" json:"belief_id"`
	PerceptionID string    `gorm:"primaryKey;size:26;index" json:"perception_id"`
	ChatID       string    `gorm:"size:26;not null;index" json:"chat_id"`
	CreatedAt    time.Time `json:"created_at"`
}

// BeliefChange is one step of a belief's confidence history: formed, or
// rewritten by a reflection or lowered by a belief check, at a space turn.
// It holds no words (the belief's row does) and goes with its belief.
// Steps of one turn are one row, the last written.
type BeliefChange struct {
	BeliefID   string    `gorm:"primaryKey;size:26" json:"belief_id"`
	Seq        int64     `gorm:"primaryKey" json:"seq"`
	Confidence int       `gorm:"not null" json:"confidence"`
	Why        string    `gorm:"size:16;not null" json:"why"`
	CreatedAt  time.Time `json:"created_at"`
}

// Why a belief's confidence stands where it does (BeliefChange.Why).
const (
	ChangeFormed     = "formed"
	ChangeReflection = "reflection"
	ChangeCheck      = "check"
)

// ReflectionSeen marks a perception a completed reflection of its character
// has shown: it is no longer new. Forgetting a belief deletes the marks of
// the perceptions it cited, so they become new again.
type ReflectionSeen struct {
	PerceptionID string `gorm:"primaryKey;size:26" json:"perception_id"`
	ChatID       string `gorm:"size:26;not null;index" json:"chat_id"`
}

// ReflectionState is a chat's last reflection: the space turn it ran at,
// the turn of the last automatic one, and the scene then.
type ReflectionState struct {
	ChatID      string    `gorm:"primaryKey;size:26" json:"chat_id"`
	LastSeq     int64     `gorm:"not null" json:"last_seq"`
	LastAutoSeq int64     `gorm:"not null" json:"last_auto_seq"`
	Place       string    `gorm:"size:200;not null;default:''" json:"place"`
	Day         int       `gorm:"not null;default:0" json:"day"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// TableName keeps evidence's plural clear.
func (BeliefEvidence) TableName() string { return "belief_evidence" }

// TableName keeps the seen marks' name short.
func (ReflectionSeen) TableName() string { return "reflection_seen" }

func beliefTables() []any {
	return []any{&Belief{}, &BeliefEvidence{}, &BeliefCheck{}, &BeliefChange{}, &ReflectionSeen{}, &ReflectionState{}}
}

// BeliefEvidence reads the evidence of the given beliefs, with the
// contradictions their checks recorded, as Beliefs gives it: every id
// asked for is in the map, with nil for a belief without links.
func (s *Store) BeliefEvidence(ctx context.Context, ids []string) (map[string][]belief.Evidence, error) {
	return s.beliefLinks(ctx, ids, nil)
}

// BeliefLinksTo reads the evidence of the given beliefs as BeliefEvidence
// does, but only their links to the perceptions to: all that a reflection
// round over those perceptions consults (a belief's links to them, and
// whether one may say Sure, which a merge alone asks of all its links).
// A long-held belief has thousands of links; a round shows some dozens of
// perceptions.
func (s *Store) BeliefLinksTo(ctx context.Context, ids, to []string) (map[string][]belief.Evidence, error) {
	if to == nil {
		to = []string{}
	}
	return s.beliefLinks(ctx, ids, to)
}

// beliefLinks reads the beliefs' links, to the perceptions to (all when
// to is nil).
func (s *Store) beliefLinks(ctx context.Context, ids, to []string) (map[string][]belief.Evidence, error) {
	out := make(map[string][]belief.Evidence, len(ids))
	for part := range slices.Chunk(ids, 500) {
		ev, err := beliefEvidence(s.db.WithContext(ctx), part, to)
		if err != nil {
			return nil, err
		}
		for _, id := range part {
			out[id] = ev[id]
		}
	}
	return out, nil
}

// BeliefView is a belief with its character.
type BeliefView struct {
	Character string `json:"character"`
	belief.Belief
}

// Beliefs lists the beliefs of a space (character "" for every character),
// with their evidence, by character and turn.
func (s *Store) Beliefs(ctx context.Context, spaceID, character string) ([]BeliefView, error) {
	if character == "" {
		return loadBeliefs(s.db.WithContext(ctx), "space_id = ?", spaceID)
	}
	return loadBeliefs(s.db.WithContext(ctx), "space_id = ? AND character_name = ?", spaceID, character)
}

// loadBeliefs reads the beliefs matching where, with their evidence and
// the contradictions their checks recorded.
func loadBeliefs(db *gorm.DB, where string, args ...any) ([]BeliefView, error) {
	rows, err := beliefRows(db, where, args...)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, b := range rows {
		ids[i] = b.ID
	}
	byBelief, err := beliefEvidence(db, ids, nil)
	if err != nil {
		return nil, err
	}
	out := make([]BeliefView, len(rows))
	for i, b := range rows {
		out[i] = BeliefView{Character: b.Character, Belief: beliefOf(b, byBelief[b.ID])}
	}
	return out, nil
}

// beliefRows reads the beliefs matching where, by character and turn.
func beliefRows(db *gorm.DB, where string, args ...any) ([]Belief, error) {
	var rows []Belief
	if err := db.Where(where, args...).Order("character_name, formed_seq, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: beliefs: %w", err)
	}
	return rows, nil
}

func beliefOf(b Belief, ev []belief.Evidence) belief.Belief {
	return belief.Belief{ID: b.ID, Text: b.Text, Confidence: belief.Confidence(b.Confidence), About: lines(b.About),
		FormedTurn: b.FormedSeq, ChangedTurn: b.ChangedSeq, Evidence: ev, MergedFrom: lines(b.MergedFrom)}
}

// beliefEvidence reads the evidence links of the beliefs ids, in turn
// order, then the contradictions their checks recorded that no link says;
// only those to the perceptions to, unless to is nil.
func beliefEvidence(db *gorm.DB, ids, to []string) (map[string][]belief.Evidence, error) {
	if to != nil && len(to) == 0 {
		return map[string][]belief.Evidence{}, nil
	}
	byBelief, err := evidenceLinks(db, ids, to)
	if err != nil {
		return nil, fmt.Errorf("models: belief evidence: %w", err)
	}
	var checks []BeliefCheck
	q := db.Where(inList(db, "belief_id IN ?"), listArg(db, ids))
	if to != nil {
		q = q.Where(inList(db, "perception_id IN ?"), listArg(db, to))
	}
	if err := q.Find(&checks).Error; err != nil {
		return nil, fmt.Errorf("models: belief checks: %w", err)
	}
	for _, c := range checks {
		have := false
		for _, e := range byBelief[c.BeliefID] {
			have = have || (e.Perception == c.PerceptionID && e.Stance == belief.Contradicts)
		}
		if !have {
			byBelief[c.BeliefID] = append(byBelief[c.BeliefID], belief.Evidence{Perception: c.PerceptionID, Stance: belief.Contradicts})
		}
	}
	return byBelief, nil
}

// evidenceLinks reads the evidence links of the beliefs ids, in turn
// order, four columns scanned by hand: a reflection round reads some
// thousands of them (troupe bench: 4,000 for 45 beliefs), and GORM's
// reflection over whole rows was a quarter of a round's CPU.
func evidenceLinks(db *gorm.DB, ids, to []string) (map[string][]belief.Evidence, error) {
	q := db.Model(&BeliefEvidence{}).Select("belief_id, perception_id, seq, stance").Where(inList(db, "belief_id IN ?"), listArg(db, ids))
	if to != nil {
		q = q.Where(inList(db, "perception_id IN ?"), listArg(db, to))
	}
	rows, err := q.Order("seq, perception_id").Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string][]belief.Evidence, len(ids))
	var id, stance sql.RawBytes
	for rows.Next() {
		var e belief.Evidence
		if err := rows.Scan(&id, &e.Perception, &e.Turn, &stance); err != nil {
			return nil, err
		}
		e.Stance = belief.Stance(stance)
		out[string(id)] = append(out[string(id)], e)
	}
	return out, rows.Err()
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
