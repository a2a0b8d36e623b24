package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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
	return []any{&Belief{}, &BeliefEvidence{}, &BeliefCheck{}, &ReflectionSeen{}, &ReflectionState{}}
}

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

// BeliefEvidence reads the evidence of the given beliefs, with the
// contradictions their checks recorded, as Beliefs gives it: every id
// asked for is in the map, with nil for a belief without links.
func (s *Store) BeliefEvidence(ctx context.Context, ids []string) (map[string][]belief.Evidence, error) {
	out := make(map[string][]belief.Evidence, len(ids))
	for part := range slices.Chunk(ids, 500) {
		ev, err := beliefEvidence(s.db.WithContext(ctx), part)
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
	byBelief, err := beliefEvidence(db, ids)
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
// order, then the contradictions their checks recorded that no link says.
func beliefEvidence(db *gorm.DB, ids []string) (map[string][]belief.Evidence, error) {
	var ev []BeliefEvidence
	if err := db.Where("belief_id IN ?", ids).Order("seq, perception_id").Find(&ev).Error; err != nil {
		return nil, fmt.Errorf("models: belief evidence: %w", err)
	}
	var checks []BeliefCheck
	if err := db.Where("belief_id IN ?", ids).Find(&checks).Error; err != nil {
		return nil, fmt.Errorf("models: belief checks: %w", err)
	}
	byBelief := map[string][]belief.Evidence{}
	for _, e := range ev {
		byBelief[e.BeliefID] = append(byBelief[e.BeliefID], belief.Evidence{Perception: e.PerceptionID, Turn: e.Seq, Stance: belief.Stance(e.Stance)})
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

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ReflectionInstall is one character's finished reflection: the
// perceptions it showed, the beliefs its checks lowered and the
// contradictions they found, and the validated changes.
type ReflectionInstall struct {
	ChatID, CardID, SpaceID, Character string
	Seen                               []string        `json:"seen"`
	Doubted                            []belief.Belief `json:"doubted"`
	Changes                            belief.Changes  `json:"changes"`
}

// InstallReflection installs one character's reflection in one
// transaction, under the chat's and the (card, space) locks like every
// memory install: check results, changes, folds and seen marks, or nothing.
// It returns ErrChatGone when the chat was forgotten and ErrStale when a
// perception it cites or a belief it changes is gone meanwhile.
func (s *Store) InstallReflection(ctx context.Context, r ReflectionInstall) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.lockChat(tx, r.ChatID); err != nil {
			return err
		}
		if err := s.lockMemory(tx, MemoryKey{r.CardID, r.SpaceID}); err != nil {
			return err
		}
		chats, err := s.citedChats(tx, r)
		if err != nil {
			return err
		}
		var already int64
		if err := tx.Model(&ReflectionSeen{}).Where("perception_id IN ?", append(r.Seen, "")).Count(&already).Error; err != nil {
			return err
		}
		if already > 0 {
			return ErrStale
		}
		s.paused("install reflection")
		if len(r.Changes.Deleted) > 0 {
			if err := deleteBeliefs(tx, r.Changes.Deleted); err != nil {
				return err
			}
		}
		for _, b := range r.Doubted {
			if err := writeBelief(tx, r, b, chats, false, now); err != nil {
				return err
			}
			for _, e := range b.Evidence {
				if e.Stance != belief.Contradicts {
					continue
				}
				if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&BeliefCheck{BeliefID: b.ID, PerceptionID: e.Perception,
					ChatID: chats[e.Perception], CreatedAt: now}).Error; err != nil {
					return err
				}
			}
		}
		for _, b := range r.Changes.Updated {
			if err := writeBelief(tx, r, b, chats, false, now); err != nil {
				return err
			}
		}
		for _, b := range r.Changes.Created {
			if err := writeBelief(tx, r, b, chats, true, now); err != nil {
				return err
			}
		}
		if err := foldInto(tx, r.Changes.Folded); err != nil {
			return err
		}
		// Plain inserts: a perception another run showed meanwhile (two
		// chats of a space reflecting the same character) fails this
		// install rather than forming its beliefs twice.
		seen := make([]ReflectionSeen, len(r.Seen))
		for i, id := range r.Seen {
			seen[i] = ReflectionSeen{PerceptionID: id, ChatID: chats[id]}
		}
		if len(seen) == 0 {
			return nil
		}
		if err := tx.CreateInBatches(seen, 200).Error; err != nil {
			return err
		}
		return markReflected(tx, r.Seen, true)
	})
	if err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrChatGone) {
			return err
		}
		return fmt.Errorf("models: install reflection for %s: %w", r.Character, err)
	}
	return nil
}

// foldInto marks folded perceptions with their belief: one statement per
// belief, not one per perception (a run folds up to a hundred).
func foldInto(tx *gorm.DB, folds []belief.Fold) error {
	byBelief := map[string][]string{}
	var order []string
	for _, f := range folds {
		if _, ok := byBelief[f.Belief]; !ok {
			order = append(order, f.Belief)
		}
		byBelief[f.Belief] = append(byBelief[f.Belief], f.Perception)
	}
	for _, b := range order {
		ids := byBelief[b]
		for start := 0; start < len(ids); start += 500 {
			if err := tx.Model(&Perception{}).Where("id IN ?", ids[start:min(start+500, len(ids))]).Update("folded_into", b).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// citedChats maps every perception the install cites to its chat, and
// returns ErrStale when one is gone (its chat was forgotten meanwhile).
func (s *Store) citedChats(tx *gorm.DB, r ReflectionInstall) (map[string]string, error) {
	want := map[string]bool{}
	for _, id := range r.Seen {
		want[id] = true
	}
	for _, bs := range [][]belief.Belief{r.Doubted, r.Changes.Updated, r.Changes.Created} {
		for _, b := range bs {
			for _, e := range b.Evidence {
				want[e.Perception] = true
			}
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	chats := map[string]string{}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		var ps []Perception
		q := tx.Select("id, chat_id").Where("id IN ?", part)
		if s.dialect == "postgres" {
			// KEY SHARE keeps forgetBeliefs (FOR UPDATE) out and lets a
			// turn count a recall of the same perceptions meanwhile.
			q = q.Clauses(clause.Locking{Strength: "KEY SHARE"})
		}
		if err := q.Find(&ps).Error; err != nil {
			return nil, err
		}
		for _, p := range ps {
			chats[p.ID] = p.ChatID
		}
	}
	if len(chats) != len(ids) {
		return nil, ErrStale
	}
	return chats, nil
}

// writeBelief inserts or rewrites a belief and its evidence links.
func writeBelief(tx *gorm.DB, r ReflectionInstall, b belief.Belief, chats map[string]string, create bool, now time.Time) error {
	row := Belief{ID: b.ID, SpaceID: r.SpaceID, Character: r.Character, Text: b.Text, Confidence: int(b.Confidence),
		About: strings.Join(b.About, "\n"), FormedSeq: b.FormedTurn, ChangedSeq: b.ChangedTurn,
		MergedFrom: strings.Join(b.MergedFrom, "\n"), CreatedAt: now, UpdatedAt: now}
	if err := indexBelief(tx, row); err != nil {
		return err
	}
	if !create {
		if err := dropStaleVector(tx, row); err != nil {
			return err
		}
	}
	if create {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
	} else {
		res := tx.Model(&Belief{}).Where("id = ?", b.ID).Updates(map[string]any{"text": row.Text, "confidence": row.Confidence,
			"about": row.About, "changed_seq": row.ChangedSeq, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrStale
		}
	}
	ev := make([]BeliefEvidence, 0, len(b.Evidence))
	for _, e := range b.Evidence {
		ev = append(ev, BeliefEvidence{BeliefID: b.ID, PerceptionID: e.Perception, Stance: string(e.Stance), Seq: e.Turn, ChatID: chats[e.Perception]})
	}
	if !create {
		var err error
		if ev, err = changedEvidence(tx, b.ID, ev); err != nil {
			return err
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ev, 200).Error
}

// changedEvidence makes a rewritten belief's stored links those of want:
// it deletes the links want lacks or changes and returns the ones to
// insert. A belief's links only grow as reflection goes on, and rewriting
// them all each time made a long-held belief's every update cost hundreds
// of statements on the database's one writer.
func changedEvidence(tx *gorm.DB, beliefID string, want []BeliefEvidence) ([]BeliefEvidence, error) {
	var have []BeliefEvidence
	if err := tx.Where("belief_id = ?", beliefID).Find(&have).Error; err != nil {
		return nil, err
	}
	wanted := make(map[string]BeliefEvidence, len(want))
	for _, e := range want {
		if _, ok := wanted[e.PerceptionID]; !ok {
			wanted[e.PerceptionID] = e // the first, as the insert keeps it
		}
	}
	kept := make(map[string]bool, len(have))
	var drop []string
	for _, e := range have {
		if w, ok := wanted[e.PerceptionID]; ok && w.Stance == e.Stance && w.Seq == e.Seq && w.ChatID == e.ChatID {
			kept[e.PerceptionID] = true
			continue
		}
		drop = append(drop, e.PerceptionID)
	}
	for start := 0; start < len(drop); start += 500 {
		if err := tx.Where("belief_id = ? AND perception_id IN ?", beliefID, drop[start:min(start+500, len(drop))]).
			Delete(&BeliefEvidence{}).Error; err != nil {
			return nil, err
		}
	}
	out := want[:0:0]
	for _, e := range want {
		if !kept[e.PerceptionID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// deleteBeliefs deletes beliefs, their links and check marks and the kept
// recall blocks that show them, and unfolds the perceptions folded into
// them.
func deleteBeliefs(tx *gorm.DB, ids []string) error {
	if err := unkeepShowing(tx, ids); err != nil {
		return err
	}
	for _, m := range []any{&RecallTerm{}, &RecallVector{}} {
		if err := tx.Where("item_id IN ?", ids).Delete(m).Error; err != nil {
			return err
		}
	}
	for _, m := range []any{&BeliefEvidence{}, &BeliefCheck{}} {
		if err := tx.Where("belief_id IN ?", ids).Delete(m).Error; err != nil {
			return err
		}
	}
	if err := tx.Model(&Perception{}).Where("folded_into IN ?", ids).Update("folded_into", nil).Error; err != nil {
		return err
	}
	return tx.Where("id IN ?", ids).Delete(&Belief{}).Error
}

// markReflected sets the perceptions' reflected flag, the copy of their
// reflection_seen marks that notSeen reads.
func markReflected(tx *gorm.DB, ids []string, on bool) error {
	for part := range slices.Chunk(ids, 500) {
		if err := tx.Model(&Perception{}).Where("id IN ?", part).Update("reflected", on).Error; err != nil {
			return err
		}
	}
	return nil
}

// renew makes perceptions new again: no longer seen by a reflection.
func renew(tx *gorm.DB, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		if err := tx.Where("perception_id IN ?", part).Delete(&ReflectionSeen{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&Perception{}).Where("id IN ?", part).Updates(map[string]any{"folded_into": nil, "reflected": false}).Error; err != nil {
			return err
		}
	}
	return nil
}

// DeleteBelief removes one belief by hand (a GM's /belief forget, troupe
// memory belief delete): the perceptions it cited become new again. It
// returns the deleted belief, or ErrNotFound.
func (s *Store) DeleteBelief(ctx context.Context, id string) (Belief, error) {
	var b Belief
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&b).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return err
		}
		var cited []string
		if err := tx.Model(&BeliefEvidence{}).Where("belief_id = ?", id).Pluck("perception_id", &cited).Error; err != nil {
			return err
		}
		if err := deleteBeliefs(tx, []string{id}); err != nil {
			return err
		}
		// Forgotten by hand: no recall diagnostic keeps its words.
		if err := forgetDiagnostics(tx, []string{id}, ""); err != nil {
			return err
		}
		return renew(tx, cited)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("models: delete belief %s: %w", id, err)
	}
	return b, err
}

// forgetBeliefs runs in ForgetChat's transaction, before the chat's
// perceptions go: every belief citing one of them, for or against, and
// every belief merged from such a belief, is deleted (its wording may carry
// the chat); the other perceptions they cited become new again.
func forgetBeliefs(tx *gorm.DB, chat Chat) error {
	// On PostgreSQL the chat's perceptions are locked first: a reflection
	// install citing them (it holds them FOR KEY SHARE) commits before the
	// beliefs are read, and one that starts later finds them gone.
	var forgotten []string
	q := tx.Model(&Perception{}).Where("chat_id = ?", chat.ID)
	if tx.Dialector.Name() == "postgres" {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	if err := q.Pluck("id", &forgotten).Error; err != nil {
		return err
	}
	var chars []string
	if err := tx.Model(&Belief{}).Distinct("character_name").
		Where("space_id = ? AND id IN (SELECT belief_id FROM belief_evidence WHERE chat_id = ? UNION SELECT belief_id FROM belief_checks WHERE chat_id = ?)",
			chat.SpaceID, chat.ID, chat.ID).Pluck("character_name", &chars).Error; err != nil {
		return err
	}
	gone := make(map[string]bool, len(forgotten))
	for _, id := range forgotten {
		gone[id] = true
	}
	for _, c := range chars {
		views, err := loadBeliefs(tx, "space_id = ? AND character_name = ?", chat.SpaceID, c)
		if err != nil {
			return err
		}
		bs := make([]belief.Belief, len(views))
		for i, v := range views {
			bs[i] = v.Belief
		}
		f := belief.Forget(bs, gone)
		if len(f.Deleted) > 0 {
			if err := deleteBeliefs(tx, f.Deleted); err != nil {
				return err
			}
			// Their wording may carry the chat: so may the diagnostics
			// that show them, in any chat.
			if err := forgetDiagnostics(tx, f.Deleted, ""); err != nil {
				return err
			}
		}
		if err := renew(tx, f.Renewed); err != nil {
			return err
		}
	}
	for _, m := range []any{&BeliefEvidence{}, &BeliefCheck{}, &ReflectionSeen{}, &ReflectionState{}} {
		if err := tx.Where("chat_id = ?", chat.ID).Delete(m).Error; err != nil {
			return err
		}
	}
	return nil
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
