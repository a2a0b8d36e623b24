package models_test

import (
	"context"
	"errors"
	"testing"

	"troupe/models"
)

// MoveChannel puts a channel in another space without its current chat,
// which stays whole in the old space; a second move to the same space, as
// a racing process would try, changes nothing and ends no chat.
func TestMoveChannelLeavesItsChatBehind(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "discord:c1")
		const to = "discord:channel:g/c1"
		if err := st.EnsureSpace(ctx, models.Space{ID: to, Platform: "discord", Kind: "channel", ExternalID: "g/c1"}); err != nil {
			t.Fatal(err)
		}
		ended, moved, err := st.MoveChannel(ctx, "discord:c1", to)
		if err != nil || !moved || ended != chat.ID {
			t.Fatalf("MoveChannel = %q, %v, %v; want %q, true, nil", ended, moved, err, chat.ID)
		}
		ch, err := st.Channel(ctx, "discord:c1")
		if err != nil || ch.SpaceID != to || ch.CurrentChatID != "" {
			t.Errorf("the channel after the move: %+v, %v", ch, err)
		}
		if old, err := st.Chat(ctx, chat.ID); err != nil || old.SpaceID != "console:local:ada" {
			t.Errorf("the chat after the move: %+v, %v; want it in its old space", old, err)
		}
		if ended, moved, err := st.MoveChannel(ctx, "discord:c1", to); err != nil || moved || ended != "" {
			t.Errorf("moving again = %q, %v, %v; want nothing", ended, moved, err)
		}
		if _, _, err := st.MoveChannel(ctx, "discord:none", to); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("moving an unknown channel: err = %v, want ErrNotFound", err)
		}
	})
}
