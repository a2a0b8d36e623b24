package bot_test

import (
	"context"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/models"
	"troupe/models/testenv"
)

// A channel the platform puts in another space (a Discord channel made
// private) moves there without its chat: a scene goes on with the same cast
// in a new chat of the new space, the old chat stays in the old space, and
// from the moved channel /chats lists only the new space's chats (the
// Discord adapter's tests show /forget refusing the old one).
func TestMovedChannelKeepsItsCastAndLeavesItsChat(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newSceneRig(t, b.DSN)
			public := bot.ChannelRef{Platform: bot.PlatformDiscord, ID: "c1", SpaceKind: bot.SpaceGuild, SpaceID: "g1", Group: true}
			private := public
			private.SpaceKind, private.SpaceID = bot.SpaceChannel, "g1/c1"
			if err := r.p.BindCast(ctx, public, []string{"lantern-keeper", "tea-house"}); err != nil {
				t.Fatal(err)
			}
			ch, err := r.st.Channel(ctx, public.Key())
			if err != nil {
				t.Fatal(err)
			}
			old := ch.CurrentChatID
			in := bot.Inbound{Channel: private, AuthorID: "ada", AuthorName: "Ada", MessageID: "1", Text: "Maren, 苏砚, are you there?", CanManage: true}
			if err := handle(ctx, r.p, in, &sceneSink{}); err != nil {
				t.Fatal(err)
			}
			if ch, err = r.st.Channel(ctx, public.Key()); err != nil || ch.SpaceID != private.Space() || ch.CurrentChatID == old {
				t.Fatalf("the channel after the move: %+v, %v", ch, err)
			}
			chat, err := r.st.Chat(ctx, ch.CurrentChatID)
			if err != nil || chat.SpaceID != private.Space() {
				t.Fatalf("the new chat: %+v, %v", chat, err)
			}
			cast, err := r.st.Cast(ctx, chat.ID, false)
			if err != nil || len(cast) != 2 || cast[0].CardID != "lantern-keeper" || cast[1].CardID != "tea-house" {
				t.Errorf("the new chat's cast = %+v, %v; want Maren and 苏砚", cast, err)
			}
			if c, err := r.st.Chat(ctx, old); err != nil || c.SpaceID != public.Space() {
				t.Errorf("the old chat: %+v, %v; want it in %s", c, err, public.Space())
			}
			run := func(cmd bot.Command) string {
				s := &sceneSink{}
				in := in
				in.MessageID = ""
				if err := r.p.Exec(ctx, in, cmd, s); err != nil {
					t.Fatal(err)
				}
				return strings.Join(s.notices, "\n")
			}
			if got := run(bot.Command{Name: "chats"}); strings.Contains(got, old) || !strings.Contains(got, chat.ID) {
				t.Errorf("/chats in the moved channel = %q; want %s and not %s", got, chat.ID, old)
			}
			var n int64
			if err := r.st.DB().Model(&models.Chat{}).Where("channel_id = ?", public.Key()).Count(&n).Error; err != nil || n != 2 {
				t.Errorf("%d chats in the channel (%v), want 2", n, err)
			}
		})
	}
}
