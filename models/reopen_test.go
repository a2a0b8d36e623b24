package models_test

import (
	"context"
	"errors"
	"testing"

	"troupe/models"
)

// TestReopenEmptyChat: of a channel's chats, the newest one of the asked
// cast that nobody wrote in is made current again; a chat with a player's
// message, one of another space, and one whose cast differs (another
// order, a member away) are never taken up.
func TestReopenEmptyChat(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		const channel, space = "console:reopen", "console:local:ada"
		must(t, st.EnsureSpace(ctx, models.Space{ID: space, Platform: "console", Kind: "local", ExternalID: "ada"}))
		_, err := st.EnsureChannel(ctx, models.Channel{ID: channel, Platform: "console", ExternalID: "reopen", SpaceID: space})
		must(t, err)
		start := func(spaceID string, cast ...string) models.Chat {
			t.Helper()
			cs := models.ChatStart{ChannelID: channel, SpaceID: spaceID}
			for _, id := range cast {
				cs.Cast = append(cs.Cast, models.CastMember{CardID: id, Name: id})
				cs.Openings = append(cs.Openings, &models.Message{Role: "assistant", Content: "hello from " + id, SpeakerCardID: id})
			}
			chat, _, err := st.StartScene(ctx, cs)
			must(t, err)
			return chat
		}
		reopen := func(cast ...string) (string, error) {
			t.Helper()
			chat, _, err := st.ReopenEmptyChat(ctx, channel, space, cast)
			return chat.ID, err
		}
		current := func() string {
			t.Helper()
			ch, err := st.Channel(ctx, channel)
			must(t, err)
			return ch.CurrentChatID
		}

		played := start(space, "mara")
		must(t, st.Append(ctx, played.ID, played.HeadID, played.HeadID, []*models.Message{{Role: "user", AuthorID: "ada", Content: "hi"}}))
		if _, err := reopen("mara"); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("a chat someone wrote in: err = %v, want ErrNotFound", err)
		}
		must(t, st.EnsureSpace(ctx, models.Space{ID: "console:local:bo", Platform: "console", Kind: "local", ExternalID: "bo"}))
		start("console:local:bo", "mara")
		if _, err := reopen("mara"); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("an empty chat of another space: err = %v, want ErrNotFound", err)
		}
		empty := start(space, "mara")
		scene := start(space, "mara", "elias")
		start(space, "elias")
		if got, err := reopen("mara"); err != nil || got != empty.ID || current() != empty.ID {
			t.Fatalf("reopen mara = %s (%v), current %s; want the empty chat %s made current", got, err, current(), empty.ID)
		}
		if _, err := reopen("elias", "mara"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("a cast in another order: err = %v, want ErrNotFound", err)
		}
		if got, err := reopen("mara", "elias"); err != nil || got != scene.ID {
			t.Errorf("reopen the scene = %s (%v), want %s", got, err, scene.ID)
		}
		must(t, st.SetAway(ctx, scene.ID, "elias", true))
		if _, err := reopen("mara", "elias"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("a scene with a member away: err = %v, want ErrNotFound", err)
		}
	})
}
