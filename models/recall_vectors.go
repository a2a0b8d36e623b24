package models

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// RecallVector is the embedding of one perception or belief, for recall by
// vector similarity. A job writes it after the item was installed, never a
// turn. ID grows with every write, so a process that caches a character's
// vectors reads only those written since its last look (id > the largest it
// has). It is deleted with its item; a belief rewritten by reflection loses
// its vector and is embedded again.
type RecallVector struct {
	ID        int64  `gorm:"primaryKey;autoIncrement;index:idx_recall_vector,priority:4" json:"id"`
	ItemID    string `gorm:"size:26;not null;uniqueIndex" json:"item_id"`
	SpaceID   string `gorm:"size:128;not null;index:idx_recall_vector,priority:1" json:"space_id"`
	Character string `gorm:"column:character_name;size:200;not null;index:idx_recall_vector,priority:2" json:"character"`
	Model     string `gorm:"size:200;not null;index:idx_recall_vector,priority:3" json:"model"`
	// Kind is RecallPerception or RecallBelief.
	Kind string `gorm:"size:1;not null" json:"kind"`
	// ChatID is a perception's chat, for forgetting; "" for a belief.
	ChatID string `gorm:"size:26;not null;default:'';index" json:"chat_id"`
	// Dims is the vector's length as the model returned it.
	Dims int `gorm:"not null" json:"dims"`
	// Vector is Dims float32 values, little-endian.
	Vector []byte `gorm:"not null" json:"vector"`
}

func vectorTables() []any { return []any{&RecallVector{}} }

// EncodeVector packs v as RecallVector.Vector stores it.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// DecodeVector unpacks a stored vector into dst (grown as needed).
func DecodeVector(dst []float32, b []byte) []float32 {
	n := len(b) / 4
	dst = dst[:0]
	for i := range n {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return dst
}

// VectorItem is a perception or belief that has no vector of a model yet.
type VectorItem struct {
	ID, Kind, SpaceID string
	Character         string `gorm:"column:character_name" json:"character"`
	ChatID, Text      string
}

// PendingVectors lists up to limit items that have no vector of model: the
// chat's perceptions (a missed event, mode none, is no memory) and the
// beliefs of the chat's space. Two queries.
func (s *Store) PendingVectors(ctx context.Context, chatID, model string, limit int) ([]VectorItem, error) {
	db := s.db.WithContext(ctx)
	limit = max(limit, 1)
	model = FitName(model, NameSize)
	var out []VectorItem
	err := db.Raw(`SELECT p.id, p.space_id, p.character_name, p.chat_id, p.text FROM perceptions p
LEFT JOIN recall_vectors v ON v.item_id = p.id AND v.model = ?
WHERE p.chat_id = ? AND p.mode <> 'none' AND v.item_id IS NULL ORDER BY p.id LIMIT ?`, model, chatID, limit).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: pending vectors of chat %s: %w", chatID, err)
	}
	for i := range out {
		out[i].Kind = RecallPerception
	}
	if len(out) == limit {
		return out, nil
	}
	var space []string
	if err := db.Model(&Chat{}).Where("id = ?", chatID).Limit(1).Pluck("space_id", &space).Error; err != nil {
		return nil, fmt.Errorf("models: pending vectors of chat %s: %w", chatID, err)
	}
	if len(space) == 0 {
		return out, nil
	}
	var bs []VectorItem
	err = db.Raw(`SELECT b.id, b.space_id, b.character_name, b.text FROM beliefs b
LEFT JOIN recall_vectors v ON v.item_id = b.id AND v.model = ?
WHERE b.space_id = ? AND v.item_id IS NULL ORDER BY b.id LIMIT ?`, model, space[0], limit-len(out)).Scan(&bs).Error
	if err != nil {
		return nil, fmt.Errorf("models: pending vectors of chat %s: %w", chatID, err)
	}
	for _, b := range bs {
		b.Kind = RecallBelief
		out = append(out, b)
	}
	return out, nil
}

// WriteVectors stores vectors in one transaction. An item's vector of
// another model is replaced; an item that went meanwhile (a /forget, a
// belief deleted or rewritten) gets none, so no vector outlives its item.
// It returns how many items it gave a vector.
func (s *Store) WriteVectors(ctx context.Context, vs []RecallVector) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	var written []RecallVector
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var pids, bids []string
		for _, v := range vs {
			if v.Kind == RecallBelief {
				bids = append(bids, v.ItemID)
			} else {
				pids = append(pids, v.ItemID)
			}
		}
		live := map[string]bool{}
		for _, q := range []struct {
			model any
			ids   []string
		}{{&Perception{}, pids}, {&Belief{}, bids}} {
			if len(q.ids) == 0 {
				continue
			}
			var ids []string
			if err := tx.Model(q.model).Where("id IN ?", q.ids).Pluck("id", &ids).Error; err != nil {
				return err
			}
			for _, id := range ids {
				live[id] = true
			}
		}
		var ids []string
		for _, v := range vs {
			if live[v.ItemID] {
				v.ID = 0
				v.Character, v.Model = FitName(v.Character, NameSize), FitName(v.Model, NameSize)
				written = append(written, v)
				ids = append(ids, v.ItemID)
			}
		}
		if len(written) == 0 {
			return nil
		}
		if err := tx.Where("item_id IN ? AND model <> ?", ids, written[0].Model).Delete(&RecallVector{}).Error; err != nil {
			return err
		}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&written, 200).Error
	})
	if err != nil {
		return 0, fmt.Errorf("models: write vectors: %w", err)
	}
	return len(written), nil
}

// VectorScan asks for a character's vectors of a model written after
// AfterID, oldest first, at most Limit.
type VectorScan struct {
	SpaceID, Character, Model string
	AfterID                   int64 `json:"after_id"`
	Limit                     int   `json:"limit"`
}

// RecallVectors reads the vectors a VectorScan asks for: one range of the
// (space, character, model, id) index, so a look that finds nothing new
// costs one index probe.
func (s *Store) RecallVectors(ctx context.Context, q VectorScan) ([]RecallVector, error) {
	var out []RecallVector
	err := s.db.WithContext(ctx).Select("id, item_id, kind, dims, vector").
		Where("space_id = ? AND character_name = ? AND model = ? AND id > ?", q.SpaceID, FitName(q.Character, NameSize), FitName(q.Model, NameSize), q.AfterID).
		Order("id").Limit(max(q.Limit, 1)).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: vectors of %s: %w", q.Character, err)
	}
	return out, nil
}

// VectorsKept returns which of ids still have a vector of model (one
// probe of the item index each): a process's cache that met an item gone,
// forgotten in another process, learns that its vectors went too.
func (s *Store) VectorsKept(ctx context.Context, model string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []string
	err := s.db.WithContext(ctx).Model(&RecallVector{}).Where("item_id IN ? AND model = ?", ids, FitName(model, NameSize)).
		Pluck("item_id", &out).Error
	if err != nil {
		return nil, fmt.Errorf("models: kept vectors: %w", err)
	}
	return out, nil
}

// VectorsOwed reports whether the chat has a perception, or its space a
// belief, without a vector of model.
func (s *Store) VectorsOwed(ctx context.Context, chatID, model string) (bool, error) {
	items, err := s.PendingVectors(ctx, chatID, model, 1)
	return len(items) > 0, err
}

// dropStaleVector deletes a belief's vector in its rewrite's transaction
// when the text changes (a change of confidence alone keeps it): the
// embedding job writes one for the new text.
func dropStaleVector(tx *gorm.DB, b Belief) error {
	return tx.Exec("DELETE FROM recall_vectors WHERE item_id = ? AND EXISTS (SELECT 1 FROM beliefs WHERE id = ? AND text <> ?)", b.ID, b.ID, b.Text).Error
}
