package models

import (
	"slices"
	"strings"

	"gorm.io/gorm"
)

// recallTermsSQLite is the recall index's table on SQLite: the table is
// its primary key (item, term), with no rowid B-tree beside it, so that
// an entry costs two B-tree inserts (the key and idx_recall_term) where it
// cost four (rowid, key, search index and the chat's index). The index
// terms are most of what the recorder writes: with this and the
// statement journal kept in memory (sqliteParams), troupe bench (100 ×
// 20, SQLite) went from 230.7–234.8 turns/s with the drain to
// 234.5–246.7 (four pairs, alternated), and its drain from 0.8–0.9 s to
// 0.6–0.8 s. The columns are GORM's own for RecallTerm, so that a reader
// of the schema finds what it expects. AutoMigrate leaves the table alone
// (autoMigrated): GORM's SQLite migrator does not parse a table WITHOUT
// ROWID, took its text columns for sized ones once the table had rows,
// and rebuilt it as a rowid table.
const recallTermsSQLite = "CREATE TABLE `recall_terms` (`item_id` text,`term` text,`space_id` text NOT NULL," +
	"`character_name` text NOT NULL,`seq` integer NOT NULL,`kind` text NOT NULL,`chat_id` text NOT NULL DEFAULT \"\"," +
	"PRIMARY KEY (`item_id`,`term`)) WITHOUT ROWID"

// recallTermSearchSQLite is idx_recall_term as RecallTerm's tags declare
// it, made by hand on SQLite.
const recallTermSearchSQLite = "CREATE INDEX IF NOT EXISTS `idx_recall_term` ON `recall_terms`(`space_id`,`character_name`,`term`,`seq`,`item_id`,`kind`)"

// autoMigrated is what AutoMigrate migrates: every table, except the recall
// index's on SQLite, which migrateRecallTerms makes.
func autoMigrated(dialect string) []any {
	all := All()
	if dialect != "sqlite" {
		return all
	}
	return slices.DeleteFunc(all, func(m any) bool {
		_, ok := m.(*RecallTerm)
		return ok
	})
}

// migrateRecallTerms gives the recall index its current shape: on SQLite
// the table without rowid (rebuilt from an older one) and its search
// index, and on both no index of the chat. Until then a perception
// deleted while its terms were being written could leave entries behind,
// which a forget found by the chat's index: migrating drops them, once.
func migrateRecallTerms(db *gorm.DB, dialect string) error {
	m := db.Migrator()
	if !m.HasTable(&RecallTerm{}) {
		if dialect != "sqlite" {
			return nil // AutoMigrate makes it
		}
		if err := db.Exec(recallTermsSQLite).Error; err != nil {
			return err
		}
		return db.Exec(recallTermSearchSQLite).Error
	}
	var steps []string
	if dialect != "sqlite" {
		if !m.HasIndex(&RecallTerm{}, "idx_recall_terms_chat_id") {
			return nil
		}
		steps = []string{"DROP INDEX idx_recall_terms_chat_id"}
	} else {
		var ddl string
		if err := db.Raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'recall_terms'").Scan(&ddl).Error; err != nil {
			return err
		}
		if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
			return db.Exec(recallTermSearchSQLite).Error
		}
		steps = []string{
			"ALTER TABLE recall_terms RENAME TO recall_terms_old",
			// The old table's indexes keep their names: dropped with it
			// below, after the copy, and the search index made anew.
			recallTermsSQLite,
			"INSERT INTO recall_terms SELECT item_id, term, space_id, character_name, seq, kind, chat_id FROM recall_terms_old",
			"DROP TABLE recall_terms_old",
			recallTermSearchSQLite,
		}
	}
	for _, q := range steps {
		if err := db.Exec(q).Error; err != nil {
			return err
		}
	}
	var spaces []string
	if err := db.Model(&RecallTerm{}).Distinct("space_id").Pluck("space_id", &spaces).Error; err != nil {
		return err
	}
	for _, space := range spaces {
		if _, err := dropOrphanRows(db, &RecallTerm{}, space); err != nil {
			return err
		}
	}
	return nil
}
