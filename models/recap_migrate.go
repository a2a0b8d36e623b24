package models

import (
	"fmt"

	"gorm.io/gorm"
)

// migrateRecapKey moves a recaps table keyed by chat alone (before scenes:
// one recap per chat, its card's) to the (chat, card) key, keeping every
// row: each old recap becomes its card's. It does nothing on a new
// database or one already moved. PostgreSQL swaps the primary key in
// place; SQLite cannot, so the rows go through a copy of the table.
func migrateRecapKey(db *gorm.DB, dialect string) error {
	m := db.Migrator()
	if !m.HasTable(&Recap{}) {
		return nil
	}
	cols, err := m.ColumnTypes(&Recap{})
	if err != nil {
		return err
	}
	for _, c := range cols {
		if pk, ok := c.PrimaryKey(); ok && pk && c.Name() == "card_id" {
			return nil
		}
	}
	return db.Transaction(func(tx *gorm.DB) error {
		if dialect == "postgres" {
			var name string
			if err := tx.Raw(`SELECT conname FROM pg_constraint WHERE conrelid = 'recaps'::regclass AND contype = 'p'`).Row().Scan(&name); err != nil {
				return fmt.Errorf("recaps primary key: %w", err)
			}
			return tx.Exec(fmt.Sprintf(`ALTER TABLE recaps DROP CONSTRAINT %q, ADD PRIMARY KEY (chat_id, card_id)`, name)).Error
		}
		if err := tx.Exec(`ALTER TABLE recaps RENAME TO recaps_before_scenes`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`DROP INDEX IF EXISTS idx_recap_card_space`).Error; err != nil {
			return err
		}
		if err := tx.Migrator().CreateTable(&Recap{}); err != nil {
			return err
		}
		const cols = "chat_id, card_id, space_id, chat_name, content, hash, fingerprint, updated_at"
		if err := tx.Exec(`INSERT INTO recaps (` + cols + `) SELECT ` + cols + ` FROM recaps_before_scenes`).Error; err != nil {
			return err
		}
		return tx.Exec(`DROP TABLE recaps_before_scenes`).Error
	})
}
