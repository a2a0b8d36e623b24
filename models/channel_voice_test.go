package models_test

import (
	"context"
	"errors"
	"testing"

	"troupe/models"
)

// A channel's voice setting is off until set, survives as set, and is
// refused for a channel with no row; the channel's row reads it too.
func TestChannelVoice(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		newChat(t, st, "discord:c1")
		if on, err := st.ChannelVoice(ctx, "discord:c1"); err != nil || on {
			t.Fatalf("a new channel's voice = %v, %v; want off", on, err)
		}
		if err := st.SetChannelVoice(ctx, "discord:c1", true); err != nil {
			t.Fatal(err)
		}
		if on, err := st.ChannelVoice(ctx, "discord:c1"); err != nil || !on {
			t.Errorf("after on: %v, %v", on, err)
		}
		if ch, err := st.Channel(ctx, "discord:c1"); err != nil || !ch.Voice {
			t.Errorf("the channel's row after on: %+v, %v", ch, err)
		}
		if on, err := st.ChannelVoice(ctx, "discord:c2"); err != nil || on {
			t.Errorf("an unknown channel's voice = %v, %v; want off", on, err)
		}
		if err := st.SetChannelVoice(ctx, "discord:c2", true); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("voice of an unknown channel: err = %v, want ErrNotFound", err)
		}
		if err := st.SetChannelVoice(ctx, "discord:c1", false); err != nil {
			t.Fatal(err)
		}
		if on, _ := st.ChannelVoice(ctx, "discord:c1"); on {
			t.Error("after off the voice is still on")
		}
	})
}
