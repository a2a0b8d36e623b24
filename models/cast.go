package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/text"
)

// CastMember is one character a chat plays. Names are unique within a chat
// (they name the character in presence, perceptions and prompts); a removed
// member keeps its row, so its name stays taken and re-adding it restores it.
type CastMember struct {
	ChatID string `gorm:"primaryKey;size:26" json:"chat_id"`
	CardID string `gorm:"primaryKey;size:64" json:"card_id"`
	Name   string `gorm:"size:200;not null" json:"name"`
	// Position orders the cast by when each member was first added.
	Position int       `gorm:"not null" json:"position"`
	Away     bool      `gorm:"not null;default:false" json:"away"`
	JoinedAt time.Time `json:"joined_at"`
	// LeftAt is when the member was removed; nil while it is in the cast.
	LeftAt *time.Time `json:"left_at"`
}

// TableName names the table after what it holds.
func (CastMember) TableName() string { return "chat_casts" }

// Active reports whether the member is in the cast (not removed).
func (m CastMember) Active() bool { return m.LeftAt == nil }

// Sentinel errors of cast changes.
var (
	// ErrInCast: the card is already in the chat's cast.
	ErrInCast = errors.New("models: the card is already in the cast")
	// ErrCastFull: the cast already has its maximum size.
	ErrCastFull = errors.New("models: the cast is full")
	// ErrLastMember: the last member of a cast cannot be removed.
	ErrLastMember = errors.New("models: the last cast member cannot be removed")
)

// Cast returns the chat's cast in position order; removed members only
// when withRemoved. A chat without cast rows (older databases) has a cast
// of its card. It returns ErrNotFound when the chat does not exist.
func (s *Store) Cast(ctx context.Context, chatID string, withRemoved bool) ([]CastMember, error) {
	cast, err := castOf(s.db.WithContext(ctx), chatID)
	if err != nil {
		return nil, fmt.Errorf("models: cast of chat %s: %w", chatID, err)
	}
	if withRemoved {
		return cast, nil
	}
	return ActiveCast(cast), nil
}

// ActiveCast returns the members of cast that were not removed.
func ActiveCast(cast []CastMember) []CastMember {
	var out []CastMember
	for _, m := range cast {
		if m.Active() {
			out = append(out, m)
		}
	}
	return out
}

// castOf reads every cast row of the chat, or the implicit cast of its
// card when it has none.
func castOf(db *gorm.DB, chatID string) ([]CastMember, error) {
	var cast []CastMember
	if err := db.Where("chat_id = ?", chatID).Order("position").Find(&cast).Error; err != nil {
		return nil, err
	}
	if len(cast) > 0 {
		return cast, nil
	}
	var chat Chat
	if err := db.Where("id = ?", chatID).Take(&chat).Error; err != nil {
		return nil, notFound(err)
	}
	return []CastMember{implicitLead(db, chat)}, nil
}

// implicitLead is the cast row an older chat's card stands for.
func implicitLead(db *gorm.DB, chat Chat) CastMember {
	name := chat.CardID
	var card Card
	if err := db.Where("id = ?", chat.CardID).Take(&card).Error; err == nil && card.Name != "" {
		name = card.Name
	}
	return CastMember{ChatID: chat.ID, CardID: chat.CardID, Name: FitName(name, NameSize), JoinedAt: chat.CreatedAt}
}

// castTx runs fn on the chat's cast rows inside a transaction that holds
// the chat, creating the implicit lead's row first when there are none.
func (s *Store) castTx(ctx context.Context, chatID string, fn func(tx *gorm.DB, cast []CastMember) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var chat Chat
		q := tx
		if s.dialect == "postgres" {
			q = tx.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Where("id = ?", chatID).Take(&chat).Error; err != nil {
			return notFound(err)
		}
		var cast []CastMember
		if err := tx.Where("chat_id = ?", chatID).Order("position").Find(&cast).Error; err != nil {
			return err
		}
		if len(cast) == 0 {
			lead := implicitLead(tx, chat)
			if err := tx.Create(&lead).Error; err != nil {
				return err
			}
			cast = []CastMember{lead}
		}
		return fn(tx, cast)
	})
}

// AddCast adds the card, called name, to the chat's cast under the name it
// goes by in the chat's space (castName: a second card called "Mara"
// becomes "Mara (its id)") and returns its row. A
// member that was removed comes back under its old name. It returns
// ErrInCast when the card is in the cast, ErrCastFull when the cast already
// has max members, and ErrNotFound when the chat does not exist.
func (s *Store) AddCast(ctx context.Context, chatID, cardID, name string, max int) (CastMember, error) {
	var added CastMember
	cardID = text.FitID(cardID, IDSize)
	err := s.castTx(ctx, chatID, func(tx *gorm.DB, cast []CastMember) error {
		if len(ActiveCast(cast)) >= max {
			return ErrCastFull
		}
		taken := map[string]bool{}
		last := -1
		for _, m := range cast {
			taken[strings.ToLower(m.Name)] = true
			last = max0(last, m.Position)
			if m.CardID != cardID {
				continue
			}
			if m.Active() {
				return ErrInCast
			}
			m.LeftAt, m.Away = nil, false
			added = m
			return tx.Model(&CastMember{}).Where("chat_id = ? AND card_id = ?", chatID, cardID).
				Updates(map[string]any{"left_at": nil, "away": false}).Error
		}
		var space []string
		if err := tx.Model(&Chat{}).Where("id = ?", chatID).Pluck("space_id", &space).Error; err != nil || len(space) != 1 {
			return notFound(cmp.Or(err, gorm.ErrRecordNotFound))
		}
		now := s.now()
		name, err := castName(tx, space[0], cardID, name, now)
		if err != nil {
			return err
		}
		added = CastMember{ChatID: chatID, CardID: cardID, Name: uniqueName(name, taken), Position: last + 1, JoinedAt: now}
		return tx.Create(&added).Error
	})
	if err != nil {
		return CastMember{}, fmt.Errorf("models: add %s to the cast of chat %s: %w", cardID, chatID, err)
	}
	return added, nil
}

func max0(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// uniqueName returns name, or name with " (2)", " (3)"… when taken (keys
// lower-cased) already holds it.
func uniqueName(name string, taken map[string]bool) string {
	if !taken[strings.ToLower(name)] {
		return name
	}
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s (%d)", name, i)
		if !taken[strings.ToLower(n)] {
			return n
		}
	}
}

// RemoveCast removes the member named name from the chat's cast; its row
// stays with LeftAt set. It returns ErrNotFound when no member in the cast
// has that name, and ErrLastMember when it is the last one.
func (s *Store) RemoveCast(ctx context.Context, chatID, name string) error {
	err := s.castTx(ctx, chatID, func(tx *gorm.DB, cast []CastMember) error {
		m, ok := findMember(cast, name)
		if !ok {
			return ErrNotFound
		}
		if len(ActiveCast(cast)) <= 1 {
			return ErrLastMember
		}
		now := s.now()
		return tx.Model(&CastMember{}).Where("chat_id = ? AND card_id = ?", chatID, m.CardID).
			Updates(map[string]any{"left_at": &now, "away": false}).Error
	})
	if err != nil {
		return fmt.Errorf("models: remove %s from the cast of chat %s: %w", name, chatID, err)
	}
	return nil
}

// SetAway marks the member named name away (or back). An away member
// perceives nothing of the scene and does not answer. It returns
// ErrNotFound when no member in the cast has that name.
func (s *Store) SetAway(ctx context.Context, chatID, name string, away bool) error {
	err := s.castTx(ctx, chatID, func(tx *gorm.DB, cast []CastMember) error {
		m, ok := findMember(cast, name)
		if !ok {
			return ErrNotFound
		}
		return tx.Model(&CastMember{}).Where("chat_id = ? AND card_id = ?", chatID, m.CardID).
			Update("away", away).Error
	})
	if err != nil {
		return fmt.Errorf("models: mark %s away in chat %s: %w", name, chatID, err)
	}
	return nil
}

// findMember finds the active member named name (case-insensitively), or
// else the one member whose name is name with its card id beside it
// (castName's "Wren (wren-png)" for "Wren").
func findMember(cast []CastMember, name string) (CastMember, bool) {
	for _, m := range cast {
		if m.Active() && strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	var found []CastMember
	for _, m := range cast {
		if m.Active() && strings.EqualFold(m.Name, strings.TrimSpace(name)+" ("+m.CardID+")") {
			found = append(found, m)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return CastMember{}, false
}

// PerceivedAfter lists, in message order, up to limit ids of the chat's
// messages after afterID ("" for all) that character perceived. It reads
// the character's own presence rows in index order: O(result), however
// many messages the character missed. Messages of every branch count;
// the caller keeps those of its branch.
func (s *Store) PerceivedAfter(ctx context.Context, chatID, character, afterID string, limit int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&Presence{}).
		Where("chat_id = ? AND character_name = ? AND message_id > ? AND perceived = ?", chatID, FitName(character, NameSize), afterID, true).
		Order("message_id").Limit(limit).Pluck("message_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("models: messages %s perceived in chat %s: %w", character, chatID, err)
	}
	return ids, nil
}

// PerceivedOf tells, for each of ids that has presence rows, whether
// character perceived it. Ids without rows (messages stored before
// presence was written) are missing from the map: everyone perceived them.
func (s *Store) PerceivedOf(ctx context.Context, character string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.WithContext(ctx).Raw(`SELECT message_id, MAX(CASE WHEN character_name = ? AND perceived THEN 1 ELSE 0 END)
FROM message_presences WHERE message_id IN ? GROUP BY message_id`, FitName(character, NameSize), ids).Rows()
	if err != nil {
		return nil, fmt.Errorf("models: presence of %s: %w", character, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seen int
		if err := rows.Scan(&id, &seen); err != nil {
			return nil, fmt.Errorf("models: presence of %s: %w", character, err)
		}
		out[id] = seen == 1
	}
	return out, rows.Err()
}

// castStartRows are the cast rows and the openings' presence a new chat
// starts with: every member perceived every opening.
func castStartRows(chat Chat, cast []CastMember, openings []*Message, now time.Time) ([]CastMember, []Presence) {
	rows := make([]CastMember, 0, len(cast))
	taken := map[string]bool{}
	cards := map[string]bool{}
	for _, m := range cast {
		if cards[text.FitID(m.CardID, IDSize)] {
			continue
		}
		cards[text.FitID(m.CardID, IDSize)] = true
		i := len(rows)
		m.ChatID, m.CardID, m.Position, m.JoinedAt = chat.ID, text.FitID(m.CardID, IDSize), i, now
		m.Name = uniqueName(FitName(m.Name, NameSize-5), taken)
		taken[strings.ToLower(m.Name)] = true
		rows = append(rows, m)
	}
	var pres []Presence
	for _, o := range openings {
		for _, m := range rows {
			pres = append(pres, Presence{MessageID: o.ID, Character: m.Name, ChatID: chat.ID, SpaceID: chat.SpaceID, Perceived: true})
		}
	}
	return rows, pres
}
