package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"troupe/models"
)

// TestChatLoreState stores, replaces and forgets a chat's lore state on
// SQLite and PostgreSQL.
func TestChatLoreState(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:lore")
		if _, err := st.ChatLoreState(ctx, chat.ID); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("before any turn: got %v, want ErrNotFound", err)
		}
		long := `{"after":{"vars":{"diary":"` + strings.Repeat("日記", 5000) + `"}}}`
		for _, state := range []string{`{"after":{"turn":1}}`, long} {
			if err := st.PutChatLoreState(ctx, chat.ID, state); err != nil {
				t.Fatal(err)
			}
			got, err := st.ChatLoreState(ctx, chat.ID)
			if err != nil || got != state {
				t.Fatalf("got %d bytes (%v), want the %d stored", len(got), err, len(state))
			}
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ChatLoreState(ctx, chat.ID); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("after forget: got %v, want the state gone", err)
		}
	})
}
