package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// RecallKept is a recall block as a turn's prompt showed it to one
// character, kept word for word so that the chat's later prompts show it
// again where it stood, before the message it was recalled for. A prompt
// then changes only at its end from one turn to the next, and a
// provider's prompt cache can reuse the rest; the items it shows are not
// recalled again while it stays in the prompt. It goes with its message:
// once compaction covers that message the block is no longer sent.
//
// Scene is the scene the same turn showed after the block, when it showed
// one: it is sent again in place for as long as the character's scene
// stays the same word for word (prompt.KeptSceneAt), instead of at the
// prompt's end every turn. Text is empty when the turn recalled nothing.
type RecallKept struct {
	MessageID string    `gorm:"primaryKey;size:26" json:"message_id"`
	Character string    `gorm:"column:character_name;primaryKey;size:200" json:"character"`
	ChatID    string    `gorm:"size:26;not null;index" json:"chat_id"`
	Text      string    `gorm:"type:text;not null" json:"text"`
	Scene     string    `gorm:"type:text;not null;default:''" json:"scene"`
	CreatedAt time.Time `json:"created_at"`
	// Items are the perceptions and beliefs the block shows.
	Items []RecallKeptItem `gorm:"-" json:"items"`
}

// RecallKeptItem is one item a kept block shows. Forgetting an item (its
// chat, or a belief) deletes every kept block that shows it, in any chat:
// the block's words are the item's.
type RecallKeptItem struct {
	MessageID string `gorm:"primaryKey;size:26" json:"message_id"`
	Character string `gorm:"column:character_name;primaryKey;size:200" json:"character"`
	ItemID    string `gorm:"primaryKey;size:26;index" json:"item_id"`
	ChatID    string `gorm:"size:26;not null;index" json:"chat_id"`
}

// KeepRecall stores the recall block and scene a turn showed before
// message k.MessageID; a regenerated reply's replace them.
func (s *Store) KeepRecall(ctx context.Context, k RecallKept, items []string) error {
	k.Character = FitName(k.Character, NameSize)
	k.CreatedAt = s.now()
	var err error
	if s.dialect == "postgres" {
		err = s.keepRecallPostgres(ctx, k, items)
	} else {
		err = s.keepRecallTx(ctx, k, items)
	}
	if errors.Is(err, ErrChatGone) {
		return err
	}
	if err != nil {
		return fmt.Errorf("models: keep recall of chat %s: %w", k.ChatID, err)
	}
	return nil
}

// keepRecallPostgres is KeepRecall in one statement, so one round trip
// of every turn's rather than six (a transaction of four statements): the
// chat's row held FOR KEY SHARE (holdChat) for as long as it runs, the
// block written, and its items made items: those it no longer shows
// deleted and the others inserted, two sets apart, since the statement's
// parts all see the rows as they were before it.
const keepRecallPostgres = `WITH c AS (SELECT id FROM chats WHERE id = ? FOR KEY SHARE),
gone AS (DELETE FROM recall_kept_items WHERE message_id = ? AND character_name = ? AND item_id <> ALL(CAST(? AS text[]))
  AND EXISTS (SELECT 1 FROM c)),
block AS (INSERT INTO recall_kepts (message_id, character_name, chat_id, text, scene, created_at)
  SELECT ?, ?, c.id, ?, ?, ? FROM c
  ON CONFLICT (message_id, character_name) DO UPDATE SET text = excluded.text, scene = excluded.scene, created_at = excluded.created_at),
shown AS (INSERT INTO recall_kept_items (message_id, character_name, item_id, chat_id)
  SELECT ?, ?, x.id, c.id FROM c, unnest(CAST(? AS text[])) AS x(id) ON CONFLICT DO NOTHING)
SELECT count(*) FROM c`

func (s *Store) keepRecallPostgres(ctx context.Context, k RecallKept, items []string) error {
	ids := textArray(items)
	var held int
	if err := s.db.WithContext(ctx).Raw(keepRecallPostgres, k.ChatID, k.MessageID, k.Character, ids,
		k.MessageID, k.Character, k.Text, k.Scene, k.CreatedAt, k.MessageID, k.Character, ids).Row().Scan(&held); err != nil {
		return err
	}
	if held == 0 {
		return ErrChatGone
	}
	return nil
}

func (s *Store) keepRecallTx(ctx context.Context, k RecallKept, items []string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.holdChat(tx, k.ChatID); err != nil {
			return err
		}
		if err := tx.Where("message_id = ? AND character_name = ?", k.MessageID, k.Character).Delete(&RecallKeptItem{}).Error; err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "message_id"}, {Name: "character_name"}},
			DoUpdates: clause.AssignmentColumns([]string{"text", "scene", "created_at"}),
		}).Create(&k).Error; err != nil {
			return err
		}
		rows := make([]RecallKeptItem, 0, len(items))
		for _, id := range items {
			rows = append(rows, RecallKeptItem{MessageID: k.MessageID, Character: k.Character, ItemID: id, ChatID: k.ChatID})
		}
		if len(rows) == 0 {
			return nil
		}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
	})
}

// KeptRecalls reads the blocks kept for character before the given
// messages of a chat, with their items: one query, on a turn's path.
func (s *Store) KeptRecalls(ctx context.Context, chatID, character string, messageIDs []string) ([]RecallKept, error) {
	if len(messageIDs) == 0 {
		return nil, nil
	}
	character = FitName(character, NameSize)
	var rows []struct {
		RecallKept
		ItemID *string
	}
	err := s.db.WithContext(ctx).Table("recall_kepts AS k").
		Select("k.message_id, k.character_name, k.chat_id, k.text, k.scene, k.created_at, i.item_id").
		Joins("LEFT JOIN recall_kept_items AS i ON i.message_id = k.message_id AND i.character_name = k.character_name").
		Where(s.oneOf("k.chat_id = ? AND k.character_name = ? AND k.message_id IN ?"), chatID, character, s.ids(messageIDs)).
		Order("k.message_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: kept recalls of chat %s: %w", chatID, err)
	}
	var out []RecallKept
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].MessageID != r.MessageID {
			out = append(out, r.RecallKept)
		}
		if r.ItemID != nil {
			k := &out[len(out)-1]
			k.Items = append(k.Items, RecallKeptItem{MessageID: k.MessageID, Character: k.Character, ItemID: *r.ItemID, ChatID: k.ChatID})
		}
	}
	return out, nil
}

// unkeepShowing deletes, inside a forget's transaction, every kept recall
// block that shows one of the items (ids, or a subquery selecting them).
func unkeepShowing(tx *gorm.DB, items any) error {
	var keys []struct{ MessageID, Character string }
	if err := tx.Model(&RecallKeptItem{}).Distinct("message_id", "character_name AS character").
		Where("item_id IN (?)", items).Scan(&keys).Error; err != nil {
		return err
	}
	for _, k := range keys {
		for _, m := range []any{&RecallKept{}, &RecallKeptItem{}} {
			if err := tx.Where("message_id = ? AND character_name = ?", k.MessageID, k.Character).Delete(m).Error; err != nil {
				return err
			}
		}
	}
	return nil
}
