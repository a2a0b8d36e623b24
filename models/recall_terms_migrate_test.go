package models_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"troupe/models"
	"troupe/models/testenv"
)

// oldRecallTermsSQLite is the recall index's table as GORM made it before:
// a rowid table beside its key, with an index of the chat.
var oldRecallTermsSQLite = []string{
	"CREATE TABLE `recall_terms` (`item_id` text,`term` text,`space_id` text NOT NULL,`character_name` text NOT NULL,`seq` integer NOT NULL,`kind` text NOT NULL,`chat_id` text NOT NULL DEFAULT \"\",PRIMARY KEY (`item_id`,`term`))",
	"INSERT INTO recall_terms SELECT * FROM recall_terms_new",
	"DROP TABLE recall_terms_new",
	"CREATE INDEX `idx_recall_terms_chat_id` ON `recall_terms`(`chat_id`)",
	"CREATE INDEX `idx_recall_term` ON `recall_terms`(`space_id`,`character_name`,`term`,`seq`,`item_id`,`kind`)",
}

// The recall index keeps no index of the chat (a forget deletes its
// entries by their perceptions), and on SQLite its table is its key alone.
// A database of the older shape is migrated to it, and the entries an
// older version could leave without their perception go on the way; the
// living ones are still found.
func TestMigrateGivesTheRecallIndexItsShape(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			db := st.DB()
			sqlite := st.Dialect() == "sqlite"
			tableSQL := func() string {
				t.Helper()
				var ddl string
				if err := db.Raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'recall_terms'").Scan(&ddl).Error; err != nil {
					t.Fatal(err)
				}
				return ddl
			}
			count := func() int64 {
				t.Helper()
				var n int64
				if err := db.Model(&models.RecallTerm{}).Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				return n
			}
			chat := newChat(t, st, "console:terms-shape")
			appendRecorded(t, st, chat, "The lamp is lit.", "*nods*", []models.PlainEvent{{Kind: "action", Text: "The lamp is lit."}}, nil)
			appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
			recordAll(t, st, chat, "the lamp", map[int]map[string]string{0: {"Maren": "The lamp is lit."}})
			living := count()
			if living == 0 {
				t.Fatal("the record wrote no index terms")
			}
			if db.Migrator().HasIndex(&models.RecallTerm{}, "idx_recall_terms_chat_id") {
				t.Error("a new store has an index of the recall terms' chat")
			}
			if sqlite && !strings.Contains(tableSQL(), "WITHOUT ROWID") {
				t.Errorf("a new store's recall index has a rowid: %s", tableSQL())
			}
			if sqlite {
				// The table is made by hand there: it must have every
				// column RecallTerm has, and no other.
				stmt := &gorm.Statement{DB: db}
				must(t, stmt.Parse(&models.RecallTerm{}))
				var cols []string
				must(t, db.Raw("SELECT name FROM pragma_table_info('recall_terms') ORDER BY cid").Scan(&cols).Error)
				if got, want := strings.Join(cols, ","), strings.Join(stmt.Schema.DBNames, ","); got != want {
					t.Errorf("recall_terms has the columns %s; RecallTerm has %s", got, want)
				}
			}

			// The shape before, with an entry whose perception is gone.
			if sqlite {
				must(t, db.Exec("ALTER TABLE recall_terms RENAME TO recall_terms_new").Error)
				for _, q := range oldRecallTermsSQLite {
					must(t, db.Exec(q).Error)
				}
			} else {
				must(t, db.Exec("CREATE INDEX idx_recall_terms_chat_id ON recall_terms (chat_id)").Error)
			}
			must(t, db.Create(&models.RecallTerm{ItemID: models.NewID(), Term: "lamp", SpaceID: chat.SpaceID, Character: "Maren",
				Seq: 1, Kind: models.RecallPerception, ChatID: chat.ID}).Error)
			if got := count(); got != living+1 {
				t.Fatalf("%d entries before migrating, want %d", got, living+1)
			}

			must(t, st.Migrate(ctx))
			if got := count(); got != living {
				t.Errorf("%d entries after migrating, want the %d living ones", got, living)
			}
			if db.Migrator().HasIndex(&models.RecallTerm{}, "idx_recall_terms_chat_id") {
				t.Error("the index of the chat is still there after migrating")
			}
			if !db.Migrator().HasIndex(&models.RecallTerm{}, "idx_recall_term") {
				t.Error("the search index is gone after migrating")
			}
			if sqlite && !strings.Contains(tableSQL(), "WITHOUT ROWID") {
				t.Errorf("the migrated recall index has a rowid: %s", tableSQL())
			}
			if got := search(t, st, chat.SpaceID, "Maren", "the lamp"); len(got) != 1 {
				t.Errorf("search after migrating found %v, want the one perception", got)
			}
			// Migrating again changes nothing.
			must(t, st.Migrate(ctx))
			if got := count(); got != living {
				t.Errorf("%d entries after migrating again, want %d", got, living)
			}
			if sqlite && !strings.Contains(tableSQL(), "WITHOUT ROWID") {
				t.Errorf("migrating again gave the recall index a rowid: %s", tableSQL())
			}
		})
	}
}

// A perception deleted after its terms were worked out and before they
// were written takes its mark with it, and no entry of it is written: the
// index holds nothing a forget of its chat, which deletes entries by their
// perceptions, could miss.
func TestIndexWritesNoTermsOfAPerceptionDeletedMeanwhile(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:index-race")
		appendRecorded(t, st, chat, "one", "ok", []models.PlainEvent{{Kind: "line", Text: "one"}}, nil)
		appendRecorded(t, st, chat, "two", "ok", []models.PlainEvent{{Kind: "line", Text: "two"}}, nil)
		b, err := st.RecordBatch(ctx, chat.ID)
		if err != nil || len(b.Events) == 0 {
			t.Fatalf("batch: %d events, %v", len(b.Events), err)
		}
		gone, kept := models.NewID(), models.NewID()
		inst := models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID}
		for _, e := range b.Events {
			inst.EventIDs = append(inst.EventIDs, e.ID)
		}
		for _, p := range []struct{ id, text string }{{gone, "The compass lies under the pier."}, {kept, "The lantern hangs in the boathouse."}} {
			inst.Perceptions = append(inst.Perceptions, models.Perception{ID: p.id, ChatID: chat.ID, SpaceID: chat.SpaceID, Character: "Maren",
				EventID: b.Events[0].ID, Mode: "heard", Text: p.text, Importance: 5, Seq: b.Events[0].Seq})
		}
		models.SetPause(st, func(p string) {
			if p == "index owed" {
				if _, _, err := st.DeletePerception(ctx, gone); err != nil {
					t.Errorf("delete perception: %v", err)
				}
			}
		})
		err = st.InstallRecord(ctx, inst)
		models.SetPause(st, nil)
		if err != nil {
			t.Fatalf("install: %v", err)
		}
		for id, want := range map[string]bool{gone: false, kept: true} {
			var n int64
			must(t, st.DB().Model(&models.RecallTerm{}).Where("item_id = ?", id).Count(&n).Error)
			if (n > 0) != want {
				t.Errorf("perception %s (kept %v) has %d index entries", id, want, n)
			}
		}
		var owed int64
		must(t, st.DB().Model(&models.RecallOwed{}).Where("chat_id = ?", chat.ID).Count(&owed).Error)
		if owed != 0 {
			t.Errorf("%d marks left after the install", owed)
		}
	})
}
