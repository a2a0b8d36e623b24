package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/models"
	"troupe/text"
)

func TestFitID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("灯塔守夜人-", 20)
	tests := []struct {
		name, id string
	}{
		{"short stays", "lantern-keeper"},
		{"exactly the size stays", strings.Repeat("a", models.IDSize)},
		{"one over", strings.Repeat("a", models.IDSize+1)},
		{"CJK", long},
	}
	for _, tt := range tests {
		got := text.FitID(tt.id, models.IDSize)
		if utf8.RuneCountInString(tt.id) <= models.IDSize {
			if got != tt.id {
				t.Errorf("%s: %q changed to %q", tt.name, tt.id, got)
			}
			continue
		}
		if n := utf8.RuneCountInString(got); n != models.IDSize || !utf8.ValidString(got) {
			t.Errorf("%s: stand-in %q has %d characters, want %d", tt.name, got, n, models.IDSize)
		}
		if text.FitID(tt.id, models.IDSize) != got {
			t.Errorf("%s: not stable", tt.name)
		}
		if other := text.FitID(tt.id+"x", models.IDSize); other == got {
			t.Errorf("%s: two ids share the stand-in %q", tt.name, got)
		}
	}
	if got := models.FitName(strings.Repeat("名", 300), models.NameSize); utf8.RuneCountInString(got) != models.NameSize || !strings.HasSuffix(got, "…") {
		t.Errorf("FitName: %d characters", utf8.RuneCountInString(got))
	}
}

// TestTooLongRefusedAlike: a value over its column is refused with the same
// clear error on SQLite (which would store it) and PostgreSQL (which would
// fail with a raw one), through GORM creates and through Append's own SQL.
func TestTooLongRefusedAlike(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		long := strings.Repeat("u", 100)
		err := st.EnsureSpace(ctx, models.Space{ID: "console:local:" + long, Platform: "console", Kind: "local", ExternalID: long})
		var tl *models.TooLongError
		if !errors.As(err, &tl) || tl.Table != "spaces" || tl.Column != "external_id" || tl.Len != 100 || tl.Max != 64 {
			t.Fatalf("long space: %v", err)
		}
		chat := newChat(t, st, "console:ada/maren")
		err = st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{{Role: "user", AuthorID: long, Content: "hi"}})
		if !errors.Is(err, models.ErrTooLong) || !strings.Contains(err.Error(), "messages.author_id") {
			t.Fatalf("long author id: %v", err)
		}
		if got, _ := st.Chat(ctx, chat.ID); got.HeadID != chat.HeadID {
			t.Errorf("a refused append moved the head")
		}
	})
}
