package models_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"troupe/models"
)

// A SQLite file keeps one text form of times, whichever driver wrote them:
// the rows troupe wrote before its driver changed sort and compare as text
// with the rows it writes now.
func TestSQLiteWritesTimesInTheFormItAlwaysHas(t *testing.T) {
	ctx := context.Background()
	st, err := models.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "troupe.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chat := newChat(t, st, "console:times")
	appendBeat(t, st, chat.ID, 1)
	var rows []struct{ Kind, Text string }
	if err := st.DB().Raw("SELECT typeof(created_at) AS kind, created_at || '' AS text FROM messages WHERE chat_id = ?", chat.ID).
		Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d messages", len(rows))
	}
	form := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,9})?\+00:00$`)
	for _, r := range rows {
		if r.Kind != "text" || !form.MatchString(r.Text) {
			t.Errorf("created_at stored as %s %q; want text like 2026-01-02 15:04:05.123+00:00", r.Kind, r.Text)
		}
	}
	// A time in that form written by hand reads back as the same instant.
	at := time.Date(2025, 3, 4, 5, 6, 7, 890000000, time.UTC)
	if err := st.DB().Exec("UPDATE messages SET created_at = ? WHERE chat_id = ?", "2025-03-04 05:06:07.89+00:00", chat.ID).Error; err != nil {
		t.Fatal(err)
	}
	var got []models.Message
	if err := st.DB().Where("chat_id = ?", chat.ID).Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if !m.CreatedAt.Equal(at) {
			t.Errorf("read back %v; want %v", m.CreatedAt, at)
		}
	}
}
