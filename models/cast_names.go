package models

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// A cast member's name in a chat is the key of its memory in the space:
// presence, perceptions, beliefs, relationships and knowledge are stored
// under it. So that two cards never share that memory, whatever their
// display names, each card has one name per space, registered as its cast
// character row (space, name unique; card id): the card's display name
// when no other character of the space has it, else the display name and
// the card's id ("Wren (wren-png)"). The name is looked up by card id, so
// it does not depend on which chat or which order the cards came in; a
// card whose display name changed gets a name for the new one. Platforms
// still show the card's display name (the speaker's card), not this key.

// castName returns the name the card with cardID, called display, goes by
// in the space's memory, registering it when the card has none yet. A
// background character the recorder met under the display name before any
// card had it becomes the card's character. Errors are the database's.
func castName(tx *gorm.DB, spaceID, cardID, display string, now time.Time) (string, error) {
	plain := FitName(strings.TrimSpace(display), NameSize-5)
	if plain == "" {
		plain = FitName(cardID, NameSize-5)
	}
	for try := 0; try < 3; try++ {
		name, err := pickCastName(tx, spaceID, cardID, plain, now)
		if !errors.Is(err, errNameRace) {
			return name, err
		}
	}
	return "", fmt.Errorf("models: name of card %s in space %s: %w", cardID, spaceID, errNameRace)
}

// errNameRace is a name another transaction registered between the look-up
// and the insert.
var errNameRace = errors.New("models: the name was taken meanwhile")

// castHandle is the name of a card whose display name another character of
// the space has: the display name (cut to fit) and the card's id, with n
// past the first when even that is taken.
func castHandle(plain, cardID string, n int) string {
	suffix := " (" + cardID + ")"
	if n > 1 {
		suffix = fmt.Sprintf(" (%s %d)", cardID, n)
	}
	// Within NameSize-5 as every cast name, so that nothing cuts it.
	return FitName(plain, NameSize-5-utf8.RuneCountInString(suffix)) + suffix
}

func pickCastName(tx *gorm.DB, spaceID, cardID, plain string, now time.Time) (string, error) {
	var rows []Character
	err := tx.Where("space_id = ? AND (lower(name) IN (lower(?), lower(?)) OR (kind = ? AND card_id = ?))",
		spaceID, plain, castHandle(plain, cardID, 1), CharacterCast, cardID).Find(&rows).Error
	if err != nil {
		return "", err
	}
	holder := func(name string) (Character, bool) {
		for _, r := range rows {
			if strings.EqualFold(r.Name, name) {
				return r, true
			}
		}
		return Character{}, false
	}
	for _, r := range rows {
		if r.Kind == CharacterCast && r.CardID == cardID && (strings.EqualFold(r.Name, plain) || isHandleOf(r.Name, plain, cardID)) {
			return r.Name, nil
		}
	}
	h, taken := holder(plain)
	switch {
	case !taken:
		return registerCastName(tx, spaceID, cardID, plain, now)
	case h.Kind == CharacterBackground && h.CardID == "":
		// Someone the recorder met by this name before the card came: the
		// card's character from now on, no longer the introducing chat's.
		res := tx.Model(&Character{}).Where("id = ? AND kind = ?", h.ID, CharacterBackground).
			Updates(map[string]any{"kind": CharacterCast, "card_id": cardID, "chat_id": ""})
		if res.Error != nil {
			return "", res.Error
		}
		if res.RowsAffected == 0 {
			return "", errNameRace
		}
		return h.Name, nil
	}
	for n := 1; ; n++ {
		name := castHandle(plain, cardID, n)
		if n > 1 {
			var count int64
			if err := tx.Model(&Character{}).Where("space_id = ? AND lower(name) = lower(?)", spaceID, name).Count(&count).Error; err != nil {
				return "", err
			}
			if count > 0 {
				continue
			}
		} else if _, taken := holder(name); taken {
			continue
		}
		return registerCastName(tx, spaceID, cardID, name, now)
	}
}

// isHandleOf reports whether name is one of castHandle's names of the card.
func isHandleOf(name, plain, cardID string) bool {
	if strings.EqualFold(name, castHandle(plain, cardID, 1)) {
		return true
	}
	prefix := strings.TrimSuffix(castHandle(plain, cardID, 1), ")") + " "
	return strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) && strings.HasSuffix(name, ")")
}

// registerCastName inserts the card's cast character under name; a row
// another transaction inserted first is errNameRace.
func registerCastName(tx *gorm.DB, spaceID, cardID, name string, now time.Time) (string, error) {
	row := Character{ID: NewID(), SpaceID: spaceID, Name: name, Kind: CharacterCast, CardID: cardID, CreatedAt: now}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
	if res.Error != nil {
		return "", res.Error
	}
	if res.RowsAffected == 0 {
		return "", errNameRace
	}
	return name, nil
}

// registerOldCastNames registers the names chats started before castName
// gave their cast members, so that no card coming later takes a name
// another card's memory is stored under. Where two cards of a space went
// by one name, the first to have joined keeps it (their memory under it
// was one already); the other gets a name of its own in its next chats.
// It is a no-op once every such name is registered.
func registerOldCastNames(db *gorm.DB, now time.Time) error {
	type used struct{ SpaceID, CardID, Name string }
	var rows []used
	err := db.Raw(`SELECT c.space_id, cc.card_id, cc.name FROM chat_casts cc JOIN chats c ON c.id = cc.chat_id
WHERE NOT EXISTS (SELECT 1 FROM characters ch WHERE ch.space_id = c.space_id AND ch.name = cc.name)
GROUP BY c.space_id, cc.card_id, cc.name ORDER BY MIN(cc.joined_at), c.space_id, cc.card_id`).Scan(&rows).Error
	if err != nil {
		return err
	}
	// Chats older than cast rows: their card, under its name.
	var leads []used
	err = db.Raw(`SELECT c.space_id, c.card_id, k.name FROM chats c JOIN cards k ON k.id = c.card_id
WHERE NOT EXISTS (SELECT 1 FROM chat_casts cc WHERE cc.chat_id = c.id)
AND NOT EXISTS (SELECT 1 FROM characters ch WHERE ch.space_id = c.space_id AND ch.name = k.name)
GROUP BY c.space_id, c.card_id, k.name ORDER BY MIN(c.created_at), c.space_id, c.card_id`).Scan(&leads).Error
	if err != nil {
		return err
	}
	for _, l := range leads {
		l.Name = FitName(l.Name, NameSize)
		rows = append(rows, l)
	}
	for _, r := range rows {
		if r.Name == "" {
			continue
		}
		row := Character{ID: NewID(), SpaceID: r.SpaceID, Name: r.Name, Kind: CharacterCast, CardID: r.CardID, CreatedAt: now}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return err
		}
	}
	return nil
}
