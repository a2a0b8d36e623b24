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
)

// ReorganizeState is a card's reorganize bookkeeping in a space (seed 001):
// what the writers wrote since its last run, which decides when the next
// one is owed, and what that run changed, for /memory.
type ReorganizeState struct {
	CardID  string `gorm:"primaryKey;size:64"`
	SpaceID string `gorm:"primaryKey;size:128"`
	// Batches counts the memory writes installed since the last run;
	// Tokens estimates how much text they wrote.
	Batches int `gorm:"not null;default:0"`
	Tokens  int `gorm:"not null;default:0"`
	// LastRunAt is when a reorganize last installed (nil: never);
	// LastChange is what it changed, a ReorganizeChange as JSON (counts
	// only: no story text).
	LastRunAt  *time.Time
	LastChange string `gorm:"type:text;not null;default:''"`
	// Judged holds the pairs of entries the scribe found to state
	// different facts, one key a line, so they are not asked again.
	Judged    string `gorm:"type:text;not null;default:''"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ReorganizeChange counts what a reorganize changed.
type ReorganizeChange struct {
	Merged         int   `json:"merged"`
	Stale          int   `json:"stale"`
	Trimmed        int   `json:"trimmed"`
	HandbookBefore int   `json:"handbook_before"`
	HandbookAfter  int   `json:"handbook_after"`
	BeliefsRetired int   `json:"beliefs_retired"`
	BeliefsMerged  int   `json:"beliefs_merged"`
	Folded         int   `json:"folded"`
	Terms          int64 `json:"terms"`
	Vectors        int64 `json:"vectors"`
}

// Change decodes what the last reorganize changed; false when none ran.
func (st ReorganizeState) Change() (ReorganizeChange, bool) {
	var c ReorganizeChange
	if st.LastRunAt == nil || json.Unmarshal([]byte(st.LastChange), &c) != nil {
		return c, false
	}
	return c, true
}

func reorganizeTables() []any { return []any{&ReorganizeState{}} }

// noteWrite counts a memory write of tokens for the card and space's next
// reorganize, in the writer's transaction.
func noteWrite(tx *gorm.DB, key MemoryKey, tokens int, now time.Time) error {
	row := ReorganizeState{CardID: key.CardID, SpaceID: key.SpaceID, Batches: 1, Tokens: tokens, CreatedAt: now, UpdatedAt: now}
	return tx.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "card_id"}, {Name: "space_id"}},
		DoUpdates: clause.Assignments(map[string]any{
			"batches":    gorm.Expr("reorganize_states.batches + 1"),
			"tokens":     gorm.Expr("reorganize_states.tokens + ?", tokens),
			"updated_at": now,
		}),
	}).Create(&row).Error
}

// Reorganize returns a card's reorganize state in a space; the zero state
// (with its key) when it has none.
func (s *Store) Reorganize(ctx context.Context, cardID, spaceID string) (ReorganizeState, error) {
	st := ReorganizeState{CardID: cardID, SpaceID: spaceID}
	err := s.db.WithContext(ctx).Where("card_id = ? AND space_id = ?", cardID, spaceID).Take(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ReorganizeState{CardID: cardID, SpaceID: spaceID}, nil
	}
	return st, err
}

// ReorganizeDue lists the pairs that owe a reorganize: batches or more
// writes, or tokens or more written, since their last run; or, when night
// is set, anything written since a last run before night (the nightly
// one), for pairs that existed before it.
func (s *Store) ReorganizeDue(ctx context.Context, batches, tokens int, night time.Time) ([]MemoryKey, error) {
	var keys []MemoryKey
	q := s.db.WithContext(ctx).Model(&ReorganizeState{}).Select("card_id", "space_id")
	cond := s.db.Where("batches >= ? OR tokens >= ?", batches, tokens)
	if !night.IsZero() {
		cond = cond.Or("batches > 0 AND created_at < ? AND (last_run_at IS NULL OR last_run_at < ?)", night, night)
	}
	err := q.Where(cond).Order("card_id, space_id").Scan(&keys).Error
	if err != nil {
		return nil, fmt.Errorf("models: reorganize due: %w", err)
	}
	return keys, nil
}

// ReorganizeFacts is what a reorganize of a card's memory in a space reads
// besides the handbook: the character's beliefs and the perceptions they
// and the fading rules need.
type ReorganizeFacts struct {
	Memory  MemoryState
	Beliefs []BeliefView
	// Recalls counts each belief's recalls.
	Recalls map[string]int
	// Perceptions are the character's perceptions that have a gist and
	// are not folded to it yet, and every perception a belief cites.
	Perceptions map[string]ReorganizePerception
	// Clocks is each chat's latest story minute.
	Clocks map[string]int64
	State  ReorganizeState
}

// ReorganizePerception is a perception as fading reads it.
type ReorganizePerception struct {
	ID, ChatID, Text, Gist string
	Importance, Recalls    int
	StoryMinute            int64
	Folded                 bool
}

// LoadReorganize reads what a reorganize of the card's character in the
// space works on.
func (s *Store) LoadReorganize(ctx context.Context, cardID, spaceID, character string) (ReorganizeFacts, error) {
	db := s.db.WithContext(ctx)
	var f ReorganizeFacts
	var err error
	if f.Memory, err = loadMemory(db, cardID, spaceID); err != nil {
		return f, fmt.Errorf("models: load reorganize: %w", err)
	}
	if f.State, err = s.Reorganize(ctx, cardID, spaceID); err != nil {
		return f, fmt.Errorf("models: load reorganize: %w", err)
	}
	char := FitName(character, NameSize)
	if f.Beliefs, err = loadBeliefs(db, "space_id = ? AND character_name = ?", spaceID, char); err != nil {
		return f, err
	}
	f.Recalls = map[string]int{}
	var cited []string
	for _, b := range f.Beliefs {
		for _, e := range b.Evidence {
			cited = append(cited, e.Perception)
		}
	}
	var counts []struct {
		ID          string
		RecallCount int
	}
	if err := db.Model(&Belief{}).Select("id, recall_count").Where("space_id = ? AND character_name = ?", spaceID, char).Scan(&counts).Error; err != nil {
		return f, fmt.Errorf("models: load reorganize: %w", err)
	}
	for _, c := range counts {
		f.Recalls[c.ID] = c.RecallCount
	}
	var ps []Perception
	if err := db.Where("space_id = ? AND character_name = ? AND mode <> 'none' AND gist <> '' AND text <> gist", spaceID, char).Find(&ps).Error; err != nil {
		return f, fmt.Errorf("models: load reorganize: %w", err)
	}
	for part := range slices.Chunk(cited, 500) {
		var more []Perception
		if err := db.Where("id IN ?", part).Find(&more).Error; err != nil {
			return f, fmt.Errorf("models: load reorganize: %w", err)
		}
		ps = append(ps, more...)
	}
	f.Perceptions = make(map[string]ReorganizePerception, len(ps))
	for _, p := range ps {
		f.Perceptions[p.ID] = ReorganizePerception{ID: p.ID, ChatID: p.ChatID, Text: p.Text, Gist: p.Gist, Importance: p.Importance,
			Recalls: p.RecallCount, StoryMinute: storyMinute(p.Day, p.Minute), Folded: p.FoldedInto != nil}
	}
	var clocks []struct {
		ChatID string
		Day    int
		Minute int
	}
	// Each chat's latest sealed event is its story's now.
	if err := db.Raw(`SELECT e.chat_id, e.day, e.minute FROM events e
		JOIN (SELECT chat_id, MAX(seq) AS seq FROM events WHERE space_id = ? AND sealed = ? GROUP BY chat_id) m
		ON m.chat_id = e.chat_id AND m.seq = e.seq`, spaceID, true).Scan(&clocks).Error; err != nil {
		return f, fmt.Errorf("models: load reorganize clocks: %w", err)
	}
	f.Clocks = make(map[string]int64, len(clocks))
	for _, c := range clocks {
		f.Clocks[c.ChatID] = storyMinute(c.Day, c.Minute)
	}
	return f, nil
}

// BeliefMerge folds the beliefs Drop into Keep: Keep takes their evidence
// and the perceptions folded into them, and remembers them in MergedFrom.
type BeliefMerge struct {
	Keep string
	Drop []string
}

// ReorganizeInstall is a validated reorganize to install.
type ReorganizeInstall struct {
	CardID, SpaceID, Character string
	// Version is the MemoryState.Version the handbook was planned from.
	Version string
	// Handbook is the new handbook; Handbook == the loaded one changes
	// nothing.
	Handbook string
	// Retire lists beliefs to delete; their perceptions stay as they are.
	Retire []string
	Merge  []BeliefMerge
	// Fold lists perceptions whose text becomes their gist.
	Fold []string
	// Judged replaces the state's set of pairs judged different.
	Judged string
	// Change counts what the run changed, for /memory; the install adds
	// the orphans it dropped.
	Change ReorganizeChange
}

// ReorganizeResult counts what an install removed besides what it was
// given: the orphaned index terms and vectors.
type ReorganizeResult struct {
	Terms, Vectors int64
}

// InstallReorganize installs a reorganize in one transaction holding the
// card and space's lock: the handbook (the old one to history), the belief
// retirements and merges, the folded perceptions, the orphaned index terms
// and vectors of the space deleted, and the state reset with what changed.
// It returns ErrStale when the handbook, resident or recaps changed since
// r.Version, or a belief it names is gone.
func (s *Store) InstallReorganize(ctx context.Context, r ReorganizeInstall) (ReorganizeResult, error) {
	now := s.now()
	var res ReorganizeResult
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res = ReorganizeResult{}
		if err := s.lockMemory(tx, MemoryKey{r.CardID, r.SpaceID}); err != nil {
			return err
		}
		cur, err := loadMemory(tx, r.CardID, r.SpaceID)
		if err != nil {
			return err
		}
		if cur.Version() != r.Version {
			return ErrStale
		}
		s.paused("install reorganize")
		if r.Handbook != cur.Handbook {
			if err := replaceMemory(tx, cur, r.Handbook, cur.Resident, "reorganize", now); err != nil {
				return err
			}
		}
		if err := mergeBeliefs(tx, r.SpaceID, FitName(r.Character, NameSize), r.Merge); err != nil {
			return err
		}
		if len(r.Retire) > 0 {
			if err := deleteBeliefs(tx, r.Retire); err != nil {
				return err
			}
			if err := forgetDiagnostics(tx, r.Retire, ""); err != nil {
				return err
			}
		}
		for part := range slices.Chunk(r.Fold, 500) {
			if err := tx.Model(&Perception{}).Where("id IN ? AND gist <> ''", part).Update("text", gorm.Expr("gist")).Error; err != nil {
				return err
			}
		}
		if res, err = dropOrphans(tx, r.SpaceID); err != nil {
			return err
		}
		r.Change.Terms, r.Change.Vectors = res.Terms, res.Vectors
		change, err := json.Marshal(r.Change)
		if err != nil {
			return err
		}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "card_id"}, {Name: "space_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"batches", "tokens", "last_run_at", "last_change", "judged", "updated_at"}),
		}).Create(&ReorganizeState{CardID: r.CardID, SpaceID: r.SpaceID, LastRunAt: &now, LastChange: string(change), Judged: r.Judged, CreatedAt: now, UpdatedAt: now}).Error
	})
	if err != nil && !errors.Is(err, ErrStale) {
		return res, fmt.Errorf("models: install reorganize for %s/%s: %w", r.CardID, r.SpaceID, err)
	}
	return res, err
}

// mergeBeliefs carries out belief merges: each kept belief takes the
// evidence links of the dropped ones (a link to a perception that is gone
// is not carried), the perceptions folded into them, and their ids (and
// what they were merged from) in MergedFrom, so forgetting any of their
// evidence still takes it; the dropped beliefs go.
func mergeBeliefs(tx *gorm.DB, spaceID, character string, merges []BeliefMerge) error {
	for _, m := range merges {
		ids := append([]string{m.Keep}, m.Drop...)
		var rows []Belief
		if err := tx.Where("id IN ? AND space_id = ? AND character_name = ?", ids, spaceID, character).Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) != len(ids) {
			return ErrStale
		}
		var keep Belief
		from := []string{}
		for _, b := range rows {
			if b.ID == m.Keep {
				keep = b
				from = append(from, lines(b.MergedFrom)...)
			}
		}
		for _, b := range rows {
			if b.ID != m.Keep {
				from = append(from, b.ID)
				from = append(from, lines(b.MergedFrom)...)
			}
		}
		slices.Sort(from)
		from = slices.Compact(from)
		var ev []BeliefEvidence
		if err := tx.Where("belief_id IN ?", m.Drop).Find(&ev).Error; err != nil {
			return err
		}
		for _, e := range ev {
			var n int64
			if err := tx.Model(&Perception{}).Where("id = ?", e.PerceptionID).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			e.BeliefID = keep.ID
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&e).Error; err != nil {
				return err
			}
		}
		if err := tx.Model(&Perception{}).Where("folded_into IN ?", m.Drop).Update("folded_into", keep.ID).Error; err != nil {
			return err
		}
		if err := tx.Model(&Belief{}).Where("id = ?", keep.ID).Update("merged_from", strings.Join(from, "\n")).Error; err != nil {
			return err
		}
		if err := deleteBeliefs(tx, m.Drop); err != nil {
			return err
		}
		if err := forgetDiagnostics(tx, m.Drop, ""); err != nil {
			return err
		}
	}
	return nil
}

// dropOrphans deletes the space's index terms and vectors whose item (a
// perception or belief) is gone.
func dropOrphans(tx *gorm.DB, spaceID string) (ReorganizeResult, error) {
	var res ReorganizeResult
	var err error
	if res.Terms, err = dropOrphanRows(tx, &RecallTerm{}, spaceID); err != nil {
		return res, err
	}
	res.Vectors, err = dropOrphanRows(tx, &RecallVector{}, spaceID)
	return res, err
}

// dropOrphanRows deletes the rows of model (the recall index's terms or
// vectors) in the space whose item is gone, and counts them.
func dropOrphanRows(tx *gorm.DB, model any, spaceID string) (int64, error) {
	q := tx.Where("space_id = ? AND item_id NOT IN (SELECT id FROM perceptions WHERE space_id = ?) AND item_id NOT IN (SELECT id FROM beliefs WHERE space_id = ?)",
		spaceID, spaceID, spaceID).Delete(model)
	return q.RowsAffected, q.Error
}
