package main

import (
	"errors"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"troupe/fakes/memorytest"
	"troupe/models"
	"troupe/models/testenv"
)

// checkReflectionWhole checks that a character's reflection is all or
// nothing: no belief and no perception marked as reflected on, or the
// belief with its evidence, every perception it shows marked and folded.
func checkReflectionWhole(t *testing.T, st *models.Store, perceptions int64) (done bool) {
	t.Helper()
	var beliefs, evidence, seen, folded int64
	snapshot(t, st, func(tx *gorm.DB) error {
		return errors.Join(
			tx.Model(&models.Belief{}).Count(&beliefs).Error,
			tx.Model(&models.BeliefEvidence{}).Count(&evidence).Error,
			tx.Model(&models.ReflectionSeen{}).Count(&seen).Error,
			tx.Model(&models.Perception{}).Where("folded_into IS NOT NULL").Count(&folded).Error)
	})
	switch {
	case beliefs == 0 && evidence == 0 && seen == 0 && folded == 0:
		return false
	case beliefs == 1 && perceptions > 0 && evidence == perceptions && seen == perceptions && folded == perceptions:
		return true
	}
	t.Fatalf("a half-written reflection: %d beliefs, %d links, %d seen, %d folded of %d perceptions", beliefs, evidence, seen, folded, perceptions)
	return false
}

// TestWorkerKilledMidReflection kills the worker (SIGKILL) while the scribe
// answers the reflection request, or just after it answered, on SQLite and
// PostgreSQL: the reflection is installed whole or not at all, and a
// restarted worker's sweeper runs it.
func TestWorkerKilledMidReflection(t *testing.T) {
	bin := troupeBinary(t)
	for _, db := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{{"sqlite", sqliteDSN}, {"postgres", func(t *testing.T) string { return testenv.FreshPostgresDB(t) }}} {
		for round := 0; round < crashRounds(); round++ {
			t.Run(fmt.Sprintf("%s/round%d", db.name, round), func(t *testing.T) {
				t.Parallel() // each round has its own store, fake model and worker
				dsn := db.dsn(t)
				seedRecordableChat(t, dsn, 8)
				var perceptions int64
				killMidScribe(t, bin, round, scribeCrash{dsn: dsn, what: "reflection",
					envs:    []string{"TROUPE_RECORDER_BATCH=3", "TROUPE_REFLECTION_EVERY_TURNS=5"},
					target:  memorytest.IsReflection,
					respond: memorytest.Reflecting(&memorytest.Scribe{}),
					whole: func(t *testing.T, st *models.Store) bool {
						// The recorder may still be owed after the kill:
						// the perceptions a reflection shows are those
						// present when it is checked.
						st.DB().Model(&models.Perception{}).Count(&perceptions)
						return checkReflectionWhole(t, st, perceptions)
					}})
			})
		}
	}
}
