package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/text"
)

// Recap returns the recap of a chat's card (its lead), or ErrNotFound;
// of a forgotten chat, whichever recap is left.
func (s *Store) Recap(ctx context.Context, chatID string) (Recap, error) {
	var rs []Recap
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Order("card_id").Find(&rs).Error
	if err != nil {
		return Recap{}, err
	}
	if len(rs) == 0 {
		return Recap{}, ErrNotFound
	}
	var lead []string
	if err := s.db.WithContext(ctx).Model(&Chat{}).Where("id = ?", chatID).Limit(1).Pluck("card_id", &lead).Error; err != nil {
		return Recap{}, err
	}
	for _, r := range rs {
		if len(lead) > 0 && r.CardID == lead[0] {
			return r, nil
		}
	}
	return rs[0], nil
}

// CardRecap returns the recap a cast card keeps of a chat, or ErrNotFound.
func (s *Store) CardRecap(ctx context.Context, chatID, cardID string) (Recap, error) {
	var r Recap
	err := s.db.WithContext(ctx).Where("chat_id = ? AND card_id = ?", chatID, text.FitID(cardID, IDSize)).Take(&r).Error
	return r, notFound(err)
}

// ChatRecaps lists the recaps of a chat, one per cast card that has one,
// by card id.
func (s *Store) ChatRecaps(ctx context.Context, chatID string) ([]Recap, error) {
	var rs []Recap
	err := s.db.WithContext(ctx).Where("chat_id = ?", chatID).Order("card_id").Find(&rs).Error
	return rs, err
}

// ErrNotInCast: a recap was offered for a card that is not in the chat's
// cast.
var ErrNotInCast = errors.New("models: the card is not in the chat's cast")

// InstallRecap stores the recap a cast card keeps of a chat (r.CardID; ""
// for the chat's card) and its manifest entry's recap hash in one
// transaction, holding the chat's lock and the card and space's (see
// locks.go); the recap is filed under the chat's space. It returns
// ErrChatGone when the chat was forgotten and ErrNotInCast when the card
// was never in the chat's cast.
func (s *Store) InstallRecap(ctx context.Context, r Recap) error {
	_, err := s.RewriteRecap(ctx, r, "")
	return err
}

// RewriteRecap installs r as InstallRecap does, in place of the card's
// recap of hash discarded, which covers a turn a /regen took off the
// chat's branch. When the card's memory merged that recap (its manifest
// entry's merged hash is discarded), the discarded turn's words may be in
// the handbook and resident: in the same transaction, both are rewritten
// without the chat's lines (handbook.Forget), and their history the same way (as ForgetChat
// does, since no rule can tell which words of a line came from the
// discarded turn), the reasons recorded for its memory jobs are cleared
// (one may quote a line), and every merged hash of the card and space is cleared
// (as EditMemory does), so the next consolidation writes the cross-chat
// facts again from every live recap, the new one included. A consolidation
// written meanwhile finds the memory changed and is not installed. It
// reports whether it purged.
func (s *Store) RewriteRecap(ctx context.Context, r Recap, discarded string) (bool, error) {
	r.UpdatedAt = s.now()
	purged := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		purged = false
		chat, err := s.lockChat(tx, r.ChatID)
		if err != nil {
			return err
		}
		r.CardID, r.SpaceID = text.FitID(r.CardID, IDSize), chat.SpaceID
		if r.CardID == "" {
			r.CardID = chat.CardID
		}
		if r.CardID != chat.CardID {
			var n int64
			if err := tx.Model(&CastMember{}).Where("chat_id = ? AND card_id = ?", chat.ID, r.CardID).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return ErrNotInCast
			}
		}
		if err := s.lockMemory(tx, MemoryKey{r.CardID, r.SpaceID}); err != nil {
			return err
		}
		s.paused("install recap")
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "chat_id"}, {Name: "card_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"space_id", "chat_name", "content", "hash", "fingerprint", "covers", "updated_at"}),
		}).Create(&r).Error; err != nil {
			return err
		}
		e := ManifestEntry{CardID: r.CardID, SpaceID: r.SpaceID, ChatID: r.ChatID, ChatName: r.ChatName, RecapHash: r.Hash, UpdatedAt: r.UpdatedAt}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "card_id"}, {Name: "space_id"}, {Name: "chat_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"chat_name", "recap_hash", "updated_at"}),
		}).Create(&e).Error; err != nil {
			return err
		}
		if discarded == "" {
			return nil
		}
		var merged []string
		if err := tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ? AND chat_id = ?", r.CardID, r.SpaceID, r.ChatID).
			Limit(1).Pluck("merged_hash", &merged).Error; err != nil {
			return err
		}
		if len(merged) == 0 || merged[0] != discarded {
			return nil
		}
		key := MemoryKey{r.CardID, r.SpaceID}
		if err := purgeMemory(tx, key, r.ChatID, r.UpdatedAt); err != nil {
			return err
		}
		if err := clearJobReasons(tx, key); err != nil {
			return err
		}
		purged = true
		return clearMerged(tx, key.CardID, key.SpaceID, r.UpdatedAt)
	})
	if err != nil && !errors.Is(err, ErrChatGone) {
		return false, fmt.Errorf("models: install recap of %s for %s: %w", r.ChatID, r.CardID, err)
	}
	return purged && err == nil, err
}

// MemoryState is a card's cross-chat memory in a space.
type MemoryState struct {
	CardID   string `json:"card_id"`
	SpaceID  string `json:"space_id"`
	Handbook string `json:"handbook"`
	Resident string `json:"resident"`
	// HandbookHand and ResidentHand are the files' stored hand-line sets
	// (HandLineSet reads them).
	HandbookHand, ResidentHand string
	Entries                    []ManifestEntry `json:"entries"`
	Recaps                     []Recap         `json:"recaps"`
}

// Version identifies the state's contents; it changes when the handbook, the
// resident or any recap does.
func (m MemoryState) Version() string {
	v := fmt.Sprintf("%d:%s|%d:%s|%s|%s|", len(m.Handbook), m.Handbook, len(m.Resident), m.Resident, m.HandbookHand, m.ResidentHand)
	for _, r := range m.Recaps {
		v += r.ChatID + "=" + r.Hash + ";"
	}
	return v
}

// LoadMemory reads a card's cross-chat memory in a space.
func (s *Store) LoadMemory(ctx context.Context, cardID, spaceID string) (MemoryState, error) {
	return loadMemory(s.db.WithContext(ctx), cardID, spaceID)
}

func loadMemory(db *gorm.DB, cardID, spaceID string) (MemoryState, error) {
	st := MemoryState{CardID: cardID, SpaceID: spaceID}
	var hb Handbook
	if err := db.Where("card_id = ? AND space_id = ?", cardID, spaceID).Take(&hb).Error; err == nil {
		st.Handbook, st.HandbookHand = hb.Content, hb.HandLines
	} else if !errors.Is(err, gorm.ErrRecordNotFound) {
		return st, err
	}
	var rs ResidentSummary
	if err := db.Where("card_id = ? AND space_id = ?", cardID, spaceID).Take(&rs).Error; err == nil {
		st.Resident, st.ResidentHand = rs.Content, rs.HandLines
	} else if !errors.Is(err, gorm.ErrRecordNotFound) {
		return st, err
	}
	if err := db.Where("card_id = ? AND space_id = ?", cardID, spaceID).Order("chat_id").Find(&st.Entries).Error; err != nil {
		return st, err
	}
	if err := db.Where("card_id = ? AND space_id = ?", cardID, spaceID).Order("chat_id").Find(&st.Recaps).Error; err != nil {
		return st, err
	}
	return st, nil
}

// Consolidation is a validated consolidation result to install.
type Consolidation struct {
	CardID, SpaceID string
	// Version is the MemoryState.Version the result was written from.
	Version  string `json:"version"`
	Handbook string `json:"handbook"`
	Resident string `json:"resident"`
	// Merged maps each merged chat to the recap hash it merged.
	Merged map[string]string `json:"merged"`
	// Deleted lists chats whose deletion the result carries out.
	Deleted []string `json:"deleted"`
	// Tokens estimates what the scribe wrote, which counts toward the
	// next reorganize (ReorganizeState).
	Tokens int `json:"tokens"`
	// Continues marks a later slice of one consolidation (the scribe's
	// window cut it): the consolidation was counted toward the next
	// reorganize with its first slice, so this one is not.
	Continues bool `json:"continues,omitempty"`
}

// InstallConsolidation installs a handbook and resident with the history of
// the replaced versions and the manifest's merged hashes, in one
// transaction, holding the card and space's lock (see locks.go). It returns
// ErrStale if the memory changed since c.Version, as a forget of one of its
// chats changes it.
func (s *Store) InstallConsolidation(ctx context.Context, c Consolidation) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockMemory(tx, MemoryKey{c.CardID, c.SpaceID}); err != nil {
			return err
		}
		cur, err := loadMemory(tx, c.CardID, c.SpaceID)
		if err != nil {
			return err
		}
		if cur.Version() != c.Version {
			return ErrStale
		}
		s.paused("install consolidation")
		if err := replaceMemory(tx, cur, c.Handbook, c.Resident, "consolidation", now); err != nil {
			return err
		}
		for chatID, hash := range c.Merged {
			if err := tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ? AND chat_id = ?", c.CardID, c.SpaceID, chatID).
				Updates(map[string]any{"merged_hash": hash, "updated_at": now}).Error; err != nil {
				return err
			}
		}
		if len(c.Deleted) > 0 {
			if err := tx.Where("card_id = ? AND space_id = ? AND chat_id IN ?", c.CardID, c.SpaceID, c.Deleted).Delete(&ManifestEntry{}).Error; err != nil {
				return err
			}
		}
		if c.Continues {
			return nil
		}
		return noteWrite(tx, MemoryKey{c.CardID, c.SpaceID}, c.Tokens, now)
	})
	if err != nil && !errors.Is(err, ErrStale) {
		return fmt.Errorf("models: install consolidation for %s/%s: %w", c.CardID, c.SpaceID, err)
	}
	return err
}

// replaceMemory moves the current handbook and resident to history and
// writes the new ones (an empty text deletes the row).
func replaceMemory(tx *gorm.DB, cur MemoryState, handbook, resident, reason string, now time.Time) error {
	for _, h := range []struct{ kind, old, new string }{{"handbook", cur.Handbook, handbook}, {"resident", cur.Resident, resident}} {
		if h.old == h.new {
			continue
		}
		if h.old != "" {
			if err := tx.Create(&MemoryHistory{ID: NewID(), CardID: cur.CardID, SpaceID: cur.SpaceID, Kind: h.kind, Content: h.old, Reason: reason, CreatedAt: now}).Error; err != nil {
				return err
			}
		}
	}
	if err := upsertText(tx, &Handbook{CardID: cur.CardID, SpaceID: cur.SpaceID, Content: handbook, UpdatedAt: now}, handbook); err != nil {
		return err
	}
	return upsertText(tx, &ResidentSummary{CardID: cur.CardID, SpaceID: cur.SpaceID, Content: resident, UpdatedAt: now}, resident)
}

func upsertText(tx *gorm.DB, row any, text string) error {
	if text == "" {
		var key struct{ CardID, SpaceID string }
		switch r := row.(type) {
		case *Handbook:
			key.CardID, key.SpaceID = r.CardID, r.SpaceID
		case *ResidentSummary:
			key.CardID, key.SpaceID = r.CardID, r.SpaceID
		}
		return tx.Where("card_id = ? AND space_id = ?", key.CardID, key.SpaceID).Delete(row).Error
	}
	if err := withHandLines(tx, row, text); err != nil {
		return err
	}
	return tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "card_id"}, {Name: "space_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"content", "hand_lines", "updated_at"}),
	}).Create(row).Error
}

// EditMemory replaces the handbook and/or resident by hand (the hard path):
// the old versions go to history and every merged hash is cleared, so the
// next consolidation rebuilds from all remaining recaps; the lines of an
// edited file are recorded as the person's (see HandLineHash). A nil text
// leaves that file as it is. It holds the card and space's lock (see
// locks.go).
func (s *Store) EditMemory(ctx context.Context, cardID, spaceID string, handbook, resident *string, reason string) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockMemory(tx, MemoryKey{cardID, spaceID}); err != nil {
			return err
		}
		s.paused("edit memory")
		cur, err := loadMemory(tx, cardID, spaceID)
		if err != nil {
			return err
		}
		hb, rs := cur.Handbook, cur.Resident
		if handbook != nil {
			hb = *handbook
		}
		if resident != nil {
			rs = *resident
		}
		if err := replaceMemory(tx, cur, hb, rs, reason, now); err != nil {
			return err
		}
		if err := markHandLines(tx, cardID, spaceID, handbook, resident); err != nil {
			return err
		}
		return clearMerged(tx, cardID, spaceID, now)
	})
	if err != nil {
		return fmt.Errorf("models: edit memory of %s/%s: %w", cardID, spaceID, err)
	}
	return nil
}

func clearMerged(tx *gorm.DB, cardID, spaceID string, now time.Time) error {
	// Entries of chats whose recap is gone leave with their merge marks.
	if err := tx.Where("card_id = ? AND space_id = ? AND recap_hash = ''", cardID, spaceID).Delete(&ManifestEntry{}).Error; err != nil {
		return err
	}
	return tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ?", cardID, spaceID).
		Updates(map[string]any{"merged_hash": "", "updated_at": now}).Error
}

// DeleteRecap deletes recaps of a chat by hand (the hard path): the recap
// of every cast card that keeps one, or only cardID's when cardID is set.
// For each of those cards, handbook.Forget removes from its handbook and
// resident what only the chat supported, the old files go to history, the chat's
// manifest entry loses its recap hash and every merged hash is cleared, so
// the next consolidation rebuilds from the remaining recaps. It holds the
// chat's lock (when the chat still exists) and the locks of every card and
// space it touches (see locks.go), and returns the (card, space) pairs it
// changed, by card id, or ErrNotFound when there was no such recap.
func (s *Store) DeleteRecap(ctx context.Context, chatID, cardID string) ([]MemoryKey, error) {
	now := s.now()
	var keys []MemoryKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		keys = nil
		if _, err := s.lockChat(tx, chatID); err != nil && !errors.Is(err, ErrChatGone) {
			return err
		}
		q := tx.Where("chat_id = ?", chatID)
		if cardID != "" {
			q = q.Where("card_id = ?", text.FitID(cardID, IDSize))
		}
		var rs []Recap
		if err := q.Order("card_id").Find(&rs).Error; err != nil {
			return err
		}
		if len(rs) == 0 {
			return ErrNotFound
		}
		for _, r := range rs {
			keys = append(keys, MemoryKey{r.CardID, r.SpaceID})
		}
		if err := s.lockMemory(tx, keys...); err != nil {
			return err
		}
		s.paused("delete recap")
		for _, r := range rs {
			if err := tx.Where("chat_id = ? AND card_id = ?", chatID, r.CardID).Delete(&Recap{}).Error; err != nil {
				return err
			}
			if err := tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ? AND chat_id = ?", r.CardID, r.SpaceID, chatID).
				Update("recap_hash", "").Error; err != nil {
				return err
			}
			cur, err := loadMemory(tx, r.CardID, r.SpaceID)
			if err != nil {
				return err
			}
			hb, res := withoutChat(chatID)(cur.Handbook, cur.Resident)
			if err := replaceMemory(tx, cur, hb, res, "recap deleted by hand", now); err != nil {
				return err
			}
			if err := clearMerged(tx, r.CardID, r.SpaceID, now); err != nil {
				return err
			}
		}
		// The prompts that showed the handbook's resident as it was may
		// quote the chat: they go.
		return forgetTraces(tx, nil, chatID)
	})
	if errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("models: delete recap of %s: %w", chatID, err)
	}
	return keys, nil
}

// MemoryKey is a (card, space) pair.
type MemoryKey struct{ CardID, SpaceID string }

// MemoryKeys lists every (card, space) pair that has chats or memory.
func (s *Store) MemoryKeys(ctx context.Context) ([]MemoryKey, error) {
	var keys []MemoryKey
	err := s.db.WithContext(ctx).Raw(`SELECT card_id, space_id FROM chats
		UNION SELECT card_id, space_id FROM manifest_entries
		UNION SELECT card_id, space_id FROM handbooks ORDER BY 1, 2`).Scan(&keys).Error
	return keys, err
}

// OwedConsolidations lists the pairs whose manifest has a recap not merged
// or a merged chat whose recap is gone.
func (s *Store) OwedConsolidations(ctx context.Context) ([]MemoryKey, error) {
	var keys []MemoryKey
	err := s.db.WithContext(ctx).Model(&ManifestEntry{}).Distinct("card_id", "space_id").
		Where("recap_hash <> merged_hash").Scan(&keys).Error
	return keys, err
}

// SpaceChats lists the chats of a card in a space, newest first.
func (s *Store) SpaceChats(ctx context.Context, cardID, spaceID string) ([]Chat, error) {
	var chats []Chat
	err := s.db.WithContext(ctx).Where("card_id = ? AND space_id = ?", cardID, spaceID).Order("id DESC").Find(&chats).Error
	return chats, err
}

// HandbookTime returns when the handbook of a card in a space was written.
func (s *Store) HandbookTime(ctx context.Context, cardID, spaceID string) (time.Time, error) {
	var hb Handbook
	err := s.db.WithContext(ctx).Where("card_id = ? AND space_id = ?", cardID, spaceID).Take(&hb).Error
	return hb.UpdatedAt, notFound(err)
}

// Resident returns the resident summary of a card in a space, "" when none.
func (s *Store) Resident(ctx context.Context, cardID, spaceID string) (string, error) {
	var texts []string
	err := s.db.WithContext(ctx).Model(&ResidentSummary{}).Where("card_id = ? AND space_id = ?", cardID, spaceID).Limit(1).Pluck("content", &texts).Error
	if err != nil || len(texts) == 0 {
		return "", err
	}
	return texts[0], nil
}
