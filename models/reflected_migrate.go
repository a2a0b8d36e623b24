package models

import "gorm.io/gorm"

// migrateReflected fills the reflected flag from reflection_seen when the
// column was just added (flagged false), and makes the partial index that
// the reflection's "what is new" reads (notSeen): only the perceptions no
// reflection has shown yet are in it, so it stays small however long the
// story grows.
func migrateReflected(db *gorm.DB, flagged bool) error {
	if !flagged {
		if err := db.Exec("UPDATE perceptions SET reflected = true WHERE id IN (SELECT perception_id FROM reflection_seen)").Error; err != nil {
			return err
		}
	}
	return db.Exec("CREATE INDEX IF NOT EXISTS idx_perception_unseen ON perceptions (space_id, character_name, seq) WHERE reflected = false AND mode <> 'none'").Error
}
