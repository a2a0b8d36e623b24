package discord

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"troupe/config"
	"troupe/models"
)

// TestRestartAnswersMessagesLeftWaiting: a message accepted by a process
// that died before storing it in its chat waits in the pipeline's inbox;
// when the gateway is ready again, the channel is answered without a new
// message. A channel of a guild another shard serves is left alone.
func TestRestartAnswersMessagesLeftWaiting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.stop()
	// The harness's cleanup stops it again: it finds it stopped.
	h.done = make(chan error, 1)
	h.done <- nil
	ctx := context.Background()
	ref := h.ref(h.channel)
	raw, _ := json.Marshal(ref)
	key := ref.Key() + ":123"
	if _, err := h.store.Accept(ctx, &models.InboxMessage{ChannelID: ref.Key(), Platform: ref.Platform, Ref: string(raw),
		AuthorID: h.ada.ID, AuthorName: "Ada", Content: "Left waiting.", DedupKey: &key}); err != nil {
		t.Fatal(err)
	}
	a, err := New(config.Discord{Token: config.Secret(h.discord.Token()), APIBaseURL: h.discord.URL(), ShardCount: 1}, h.p, nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor(t, 15*time.Second, func() bool { return h.replied(h.channel, 1, "Left waiting.") }, "the waiting message's reply")
	if left, _ := h.store.Inbox(ctx, ref.Key()); len(left) != 0 {
		t.Errorf("%d messages still waiting", len(left))
	}

	shard := &Adapter{cfg: config.Discord{ShardID: 1, ShardCount: 2}}
	// 4194304 is 1 << 22: guild 4194304 belongs to shard 1 of 2, guild 1 to shard 0.
	if !shard.ownsGuild("4194304") || shard.ownsGuild("1") || shard.ownsGuild("") {
		t.Errorf("shard 1 of 2: ownsGuild wrong")
	}
}
