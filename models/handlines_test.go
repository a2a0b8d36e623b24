package models_test

import (
	"context"
	"testing"
	"time"

	"troupe/handbook"
	"troupe/models"
)

// wantHandLines checks a stored hand-line set against the lines it should
// hold.
func wantHandLines(t *testing.T, what, stored string, lines ...string) {
	t.Helper()
	set := handbook.HandLineSet(stored)
	if len(set) != len(lines) {
		t.Errorf("%s: %d hand lines, want %d (%q)", what, len(set), len(lines), lines)
	}
	for _, l := range lines {
		if !set[handbook.HandLineHash(l)] {
			t.Errorf("%s: %q is not a hand line", what, l)
		}
	}
}

// A hand edit records the lines a person wrote; every later write keeps
// only those the file still has, so a forgotten line leaves no hash.
func TestHandLinesFollowTheirLines(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:c1")
		hb := "# Notes\n- mine\n\n- a chat's fact [chat:" + chat.ID + "]"
		if err := st.EditMemory(ctx, "maren", "console:local:ada", &hb, nil, "test"); err != nil {
			t.Fatal(err)
		}
		mem, err := st.LoadMemory(ctx, "maren", "console:local:ada")
		if err != nil {
			t.Fatal(err)
		}
		wantHandLines(t, "after the edit", mem.HandbookHand, "# Notes", "- mine", "- a chat's fact [chat:"+chat.ID+"]")
		wantHandLines(t, "the resident nobody edited", mem.ResidentHand)

		// A consolidation never marks lines; it drops the marks of lines gone.
		err = st.InstallConsolidation(ctx, models.Consolidation{CardID: "maren", SpaceID: "console:local:ada", Version: mem.Version(),
			Handbook: "# Notes\n- mine\n- a chat's fact, reworded [chat:" + chat.ID + "]", Resident: "# R\n- x [chat:" + chat.ID + "]"})
		if err != nil {
			t.Fatal(err)
		}
		mem, _ = st.LoadMemory(ctx, "maren", "console:local:ada")
		wantHandLines(t, "after a consolidation", mem.HandbookHand, "# Notes", "- mine")
		wantHandLines(t, "the consolidated resident", mem.ResidentHand)

		// Forgetting rewrites the files through the same path.
		rs := "# R\n- x [chat:" + chat.ID + "]\n- keep it short"
		if err := st.EditMemory(ctx, "maren", "console:local:ada", nil, &rs, "test"); err != nil {
			t.Fatal(err)
		}
		_, err = st.ForgetChat(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		mem, _ = st.LoadMemory(ctx, "maren", "console:local:ada")
		wantHandLines(t, "the handbook after forget", mem.HandbookHand, "# Notes", "- mine")
		wantHandLines(t, "the resident after forget", mem.ResidentHand, "# R", "- keep it short")
	})
}

// Rows written before hand lines were tracked adopt all their lines at the
// migration: a person's line must not be lost for want of a record.
func TestMigrateAdoptsLinesOfOlderFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		db := st.DB()
		for _, m := range []any{&models.Handbook{}, &models.ResidentSummary{}} {
			if err := db.Migrator().DropColumn(m, "HandLines"); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		for _, table := range []string{"handbooks", "resident_summaries"} {
			if err := db.Exec("INSERT INTO "+table+" (card_id, space_id, content, updated_at) VALUES (?, ?, ?, ?)", "maren", "console:local:ada", "# Old\n- a person's line\n- tagged [chat:c1]", now).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		mem, err := st.LoadMemory(ctx, "maren", "console:local:ada")
		if err != nil {
			t.Fatal(err)
		}
		wantHandLines(t, "handbook", mem.HandbookHand, "# Old", "- a person's line", "- tagged [chat:c1]")
		wantHandLines(t, "resident", mem.ResidentHand, "# Old", "- a person's line", "- tagged [chat:c1]")
		// Migrating again adopts nothing more: the line a consolidation
		// wrote stays unmarked.
		err = st.InstallConsolidation(ctx, models.Consolidation{CardID: "maren", SpaceID: "console:local:ada", Version: mem.Version(),
			Handbook: "# Old\n- a person's line\n- new [chat:c1]", Resident: "# Old\n- a person's line"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		mem, _ = st.LoadMemory(ctx, "maren", "console:local:ada")
		wantHandLines(t, "handbook after a second migration", mem.HandbookHand, "# Old", "- a person's line")
	})
}
