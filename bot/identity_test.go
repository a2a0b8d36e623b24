package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"troupe/bot"
	"troupe/cards"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// TestTwoCardsOfOneNameKeepTheirOwnMemory: two cards called Maren (the
// lighthouse keeper's file and a twin's, another file) play in two
// channels of one space, the recorder and /reflect running. Each card's
// character has its own perceptions and its own belief: nothing one
// perceived is stored, cited or shown to the recorder as the other's, and
// the secret told to the first is in none of the twin's perceptions. The
// recorder's cast names the twin apart ("Maren (maren-twin)").
func TestTwoCardsOfOneNameKeepTheirOwnMemory(t *testing.T) {
	const secret = "the spare key is under the third step"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			r := newRecordRig(t, b, 100)
			keeper, ok := r.opt.Cards.Get("lantern-keeper")
			if !ok {
				t.Fatal("no lantern-keeper card")
			}
			twin := keeper
			twin.ID, twin.Description = "maren-twin", "Maren's twin, who keeps the ferry on the other shore."
			lib, err := cards.NewLibrary([]cards.Card{keeper, twin}, "")
			if err != nil {
				t.Fatal(err)
			}
			r.opt.Cards = lib
			r.p = bot.New(r.opt)
			var mu sync.Mutex
			var recorderCasts [][]string
			reflecting := memorytest.Reflecting(r.scribe)
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				if len(memorytest.RecorderEvents(req)) > 0 {
					mu.Lock()
					recorderCasts = append(recorderCasts, memorytest.RecorderCast(req))
					mu.Unlock()
				}
				return reflecting(req)
			})
			for ch, card := range map[string]string{"c1": "lantern-keeper", "c2": "maren-twin"} {
				if err := r.p.Bind(ctx, inbound(ch, 0).Channel, card); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i <= 3; i++ {
				r.say(t, "c1", i, "Ada", fmt.Sprintf("Maren, listen (%d): %s.", i, secret))
				r.say(t, "c2", 10+i, "Ada", fmt.Sprintf("Maren, how is the ferry today (%d)?", i))
			}
			// Both chats recorded, one /reflect reflects every character of
			// the space with new perceptions.
			r.exec(t, "c1", "record")
			r.exec(t, "c2", "record")
			if out := r.exec(t, "c1", "reflect"); !strings.Contains(out, "Reflected") {
				t.Fatalf("/reflect: %q", out)
			}
			c1, c2 := r.chat(t, "c1"), r.chat(t, "c2")
			if c1.SpaceID != c2.SpaceID || c1.CardID != "lantern-keeper" || c2.CardID != "maren-twin" {
				t.Fatalf("chats %+v and %+v: want one space, one card each", c1, c2)
			}

			// Perceptions: each chat's belong to one character, not the
			// other chat's.
			perceivers := func(chatID string) []string {
				t.Helper()
				var names []string
				if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", chatID).Distinct().Order("character_name").
					Pluck("character_name", &names).Error; err != nil {
					t.Fatal(err)
				}
				return names
			}
			mine, theirs := perceivers(c1.ID), perceivers(c2.ID)
			if len(mine) != 1 || len(theirs) != 1 || mine[0] == theirs[0] {
				t.Fatalf("perceivers: %q in the keeper's chat, %q in the twin's; want one each, not the same", mine, theirs)
			}
			var leaked int64
			if err := r.st.DB().Model(&models.Perception{}).Where("character_name = ? AND text LIKE ?", theirs[0], "%spare key%").
				Count(&leaked).Error; err != nil {
				t.Fatal(err)
			}
			if leaked != 0 {
				t.Errorf("%d of the twin's perceptions hold the secret told to the keeper", leaked)
			}
			var cast []models.Character
			if err := r.st.DB().Where("space_id = ? AND kind = ?", c1.SpaceID, models.CharacterCast).Find(&cast).Error; err != nil {
				t.Fatal(err)
			}
			owner := map[string]string{}
			for _, c := range cast {
				owner[c.Name] = c.CardID
			}
			if owner[mine[0]] != "lantern-keeper" || owner[theirs[0]] != "maren-twin" {
				t.Errorf("cast characters %v: want %s the keeper's and %s the twin's", owner, mine[0], theirs[0])
			}

			// Beliefs: one each, citing only its own character's chat.
			bs, err := r.st.Beliefs(ctx, c1.SpaceID, "")
			if err != nil {
				t.Fatal(err)
			}
			chatOf := map[string]string{mine[0]: c1.ID, theirs[0]: c2.ID}
			var holders []string
			for _, bl := range bs {
				holders = append(holders, bl.Character)
				var ev []models.BeliefEvidence
				if err := r.st.DB().Where("belief_id = ?", bl.ID).Find(&ev).Error; err != nil {
					t.Fatal(err)
				}
				for _, e := range ev {
					if e.ChatID != chatOf[bl.Character] {
						t.Errorf("%s's belief cites a perception of chat %s, not its own chat %s", bl.Character, e.ChatID, chatOf[bl.Character])
					}
				}
			}
			slices.Sort(holders)
			want := []string{mine[0], theirs[0]}
			slices.Sort(want)
			if !slices.Equal(holders, want) {
				t.Errorf("beliefs held by %q, want one each by %q", holders, want)
			}

			mu.Lock()
			defer mu.Unlock()
			var twinCast []string
			for _, c := range recorderCasts {
				if slices.Contains(c, theirs[0]) {
					twinCast = c
				}
			}
			if !slices.Equal(twinCast, []string{"Maren (maren-twin)"}) {
				t.Errorf("the recorder's casts %q: want the twin's chat to name it %q", recorderCasts, "Maren (maren-twin)")
			}
		})
	}
}
