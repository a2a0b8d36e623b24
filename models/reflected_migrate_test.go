package models_test

import (
	"context"
	"testing"

	"troupe/models"
	"troupe/models/testenv"
)

// A database from before the reflected flag gets it filled from the
// reflection marks when it is migrated: what a reflection showed stays
// shown, and only the rest counts as new.
func TestMigrateFillsReflectedFromMarks(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			chat := newChat(t, st, "console:reflected")
			appendRecorded(t, st, chat, "The lamp is lit.", "*nods*", []models.PlainEvent{{Kind: "action", Text: "The lamp is lit."}}, nil)
			appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
			recordAll(t, st, chat, "the lamp", map[int]map[string]string{0: {"Maren": "The lamp is lit.", "Tess": "Tess saw the lamp."}})
			seen := perceptionID(t, st, "Maren", "The lamp is lit.")
			db := st.DB()
			if err := db.Create(&models.ReflectionSeen{PerceptionID: seen, ChatID: chat.ID}).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Exec("DROP INDEX idx_perception_unseen").Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Migrator().DropColumn(&models.Perception{}, "reflected"); err != nil {
				t.Fatal(err)
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var p models.Perception
			if err := db.Where("id = ?", seen).Take(&p).Error; err != nil || !p.Reflected {
				t.Fatalf("the marked perception after migrating: reflected %v (%v)", p.Reflected, err)
			}
			got, err := st.ReflectionCandidates(ctx, chat.SpaceID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name != "Tess" || got[0].New != 1 {
				t.Fatalf("candidates after migrating = %+v, want Tess with 1 new", got)
			}
			if !db.Migrator().HasIndex(&models.Perception{}, "idx_perception_unseen") {
				t.Error("the index of unseen perceptions was not made again")
			}
			// Migrating again changes nothing.
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
