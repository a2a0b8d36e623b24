package models

import (
	"sort"
	"strings"

	"troupe/handbook"

	"gorm.io/gorm"
)

// A hand line is a line of a handbook or resident summary that a person
// wrote through the hard path (EditMemory). The store keeps, with each file,
// a hash of every line of the text a person wrote; every later write of the
// file keeps only the hashes of lines the file still has, so no hash outlives
// its line (a forgotten chat's lines leave no hash behind). Which of those
// lines are a person's entries (untagged, outside chat blocks) is for the
// memory package to say: the store knows lines, not tags.

// handLines is the stored set of every non-blank line of text.
func handLines(text string) string {
	set := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			set[handbook.HandLineHash(l)] = true
		}
	}
	return joinSet(set)
}

// keepHandLines is the part of a stored set whose lines text still has.
func keepHandLines(stored, text string) string {
	if stored == "" {
		return ""
	}
	have := handbook.HandLineSet(handLines(text))
	set := map[string]bool{}
	for h := range handbook.HandLineSet(stored) {
		if have[h] {
			set[h] = true
		}
	}
	return joinSet(set)
}

func joinSet(set map[string]bool) string {
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// withHandLines sets the hand-line set of a handbook or resident row about
// to be written with text: the set the row carries (a hand edit), else the
// stored one, without the lines text no longer has.
func withHandLines(tx *gorm.DB, row any, text string) error {
	var hand *string
	var model any
	var cardID, spaceID string
	switch r := row.(type) {
	case *Handbook:
		hand, model, cardID, spaceID = &r.HandLines, &Handbook{}, r.CardID, r.SpaceID
	case *ResidentSummary:
		hand, model, cardID, spaceID = &r.HandLines, &ResidentSummary{}, r.CardID, r.SpaceID
	default:
		return nil
	}
	if *hand == "" {
		var stored []string
		if err := tx.Model(model).Where("card_id = ? AND space_id = ?", cardID, spaceID).Limit(1).Pluck("hand_lines", &stored).Error; err != nil {
			return err
		}
		if len(stored) > 0 {
			*hand = stored[0]
		}
	}
	*hand = keepHandLines(*hand, text)
	return nil
}

// markHandLines records every line of the files a person just wrote as
// theirs, replacing the files' sets; a nil text was not edited.
func markHandLines(tx *gorm.DB, cardID, spaceID string, handbook, resident *string) error {
	for _, f := range []struct {
		model any
		text  *string
	}{{&Handbook{}, handbook}, {&ResidentSummary{}, resident}} {
		if f.text == nil {
			continue
		}
		if err := tx.Model(f.model).Where("card_id = ? AND space_id = ?", cardID, spaceID).Update("hand_lines", handLines(*f.text)).Error; err != nil {
			return err
		}
	}
	return nil
}

// untrackedHandLines lists the tables that exist without a hand_lines
// column: written before hand lines were tracked.
func untrackedHandLines(db *gorm.DB) []any {
	var out []any
	for _, m := range []any{&Handbook{}, &ResidentSummary{}} {
		if db.Migrator().HasTable(m) && !db.Migrator().HasColumn(m, "HandLines") {
			out = append(out, m)
		}
	}
	return out
}

// adoptHandLines marks every line of files written before hand lines were
// tracked as possibly a person's: a line the scribe wrote then cannot be
// told from a person's, and dropping a person's line would lose it.
func adoptHandLines(db *gorm.DB, tables []any) error {
	for _, m := range tables {
		var rows []struct{ CardID, SpaceID, Content string }
		if err := db.Model(m).Select("card_id", "space_id", "content").Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			if err := db.Model(m).Where("card_id = ? AND space_id = ?", r.CardID, r.SpaceID).Update("hand_lines", handLines(r.Content)).Error; err != nil {
				return err
			}
		}
	}
	return nil
}
