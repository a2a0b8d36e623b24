package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/models"
)

// sceneStarter starts chats of cards (id=Name pairs) in channels of a
// space and returns the names their cast got.
func sceneStarter(t *testing.T, st *models.Store, space string) func(channel string, cast ...string) []string {
	t.Helper()
	ctx := context.Background()
	must(t, st.EnsureSpace(ctx, models.Space{ID: space, Platform: "console", Kind: "local", ExternalID: space}))
	return func(channel string, cast ...string) []string {
		t.Helper()
		ch := space + "/" + channel
		_, err := st.EnsureChannel(ctx, models.Channel{ID: ch, Platform: "console", ExternalID: ch, SpaceID: space})
		must(t, err)
		cs := models.ChatStart{ChannelID: ch, SpaceID: space, Name: "t"}
		for _, c := range cast {
			id, name, _ := strings.Cut(c, "=")
			cs.Cast = append(cs.Cast, models.CastMember{CardID: id, Name: name})
		}
		_, rows, err := st.StartScene(ctx, cs)
		must(t, err)
		return castNames(rows)
	}
}

// TestCastNamesAreEachCardsOwnInASpace: a cast member's name is the
// key of its memory in the space, so two cards called "Wren" go by two
// names there — the first by its display name, the other with its id
// beside it — in every chat, whichever way round they come, while in
// another space the other is plain "Wren". A background character the
// recorder met by a card's name becomes the card's; a player's name is
// not taken. Long names and ids fit their columns on both databases and
// find their name again.
func TestCastNamesAreEachCardsOwnInASpace(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		start := sceneStarter(t, st, "console:local:ada")
		check := func(what string, got []string, want ...string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("%s: cast %q, want %q", what, got, want)
			}
		}
		check("first Wren", start("c1", "wren-json=Wren"), "Wren")
		check("second Wren", start("c2", "wren-png=Wren"), "Wren (wren-png)")
		check("first Wren again", start("c1", "wren-json=Wren"), "Wren")
		check("both, the second first", start("c3", "wren-png=Wren", "wren-json=Wren"), "Wren (wren-png)", "Wren")
		check("another space", sceneStarter(t, st, "console:local:bob")("c1", "wren-png=Wren"), "Wren")

		chat := newChat(t, st, "console:local:ada/maren")
		m, err := st.AddCast(ctx, chat.ID, "wren-png", "Wren", 8)
		must(t, err)
		if m.Name != "Wren (wren-png)" {
			t.Errorf("/cast add of the second Wren: %q, want %q", m.Name, "Wren (wren-png)")
		}
		var chars []models.Character
		must(t, st.DB().Where("space_id = ? AND kind = ?", "console:local:ada", models.CharacterCast).Order("name").Find(&chars).Error)
		var got []string
		for _, c := range chars {
			got = append(got, c.Name+"="+c.CardID)
		}
		slices.Sort(got)
		check("cast characters of the space", got, "Maren=maren", "Wren (wren-png)=wren-png", "Wren=wren-json")

		// The recorder met a Rook before the card came, and Ada plays.
		must(t, st.DB().Create(&models.Character{ID: models.NewID(), SpaceID: "console:local:ada", Name: "Rook", Kind: models.CharacterBackground, ChatID: chat.ID}).Error)
		must(t, st.DB().Create(&models.Character{ID: models.NewID(), SpaceID: "console:local:ada", Name: "Ada", Kind: models.CharacterPlayer}).Error)
		check("a card called as a background character", start("c4", "rook=Rook"), "Rook")
		var rook models.Character
		must(t, st.DB().Where("space_id = ? AND name = ?", "console:local:ada", "Rook").Take(&rook).Error)
		if rook.Kind != models.CharacterCast || rook.CardID != "rook" || rook.ChatID != "" {
			t.Errorf("the background Rook after the card came: %+v, want the card's", rook)
		}
		check("another card called Rook", start("c5", "rook-2=rook"), "rook (rook-2)")
		check("a card called as a player", start("c6", "ada-card=Ada"), "Ada (ada-card)")

		long := strings.Repeat("Ŋ", 300)
		idA, idB := strings.Repeat("a", 100), strings.Repeat("b", 100)
		first := start("c7", idA+"="+long, idB+"="+long)
		if len(first) != 2 || first[0] == first[1] {
			t.Fatalf("two long names: %q", first)
		}
		for _, n := range first {
			if utf8.RuneCountInString(n) > models.NameSize-5 {
				t.Errorf("name of %d characters: %q", utf8.RuneCountInString(n), n)
			}
		}
		check("two long names again", start("c8", idB+"="+long, idA+"="+long), first[1], first[0])
	})
}

// TestOldCastNamesAreRegistered: chats stored before cast names were kept
// per space have their names registered by the migration, the first card
// to have joined keeping a name two cards went by, so a card coming later
// never goes by a name another card's memory is stored under.
func TestOldCastNamesAreRegistered(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		const space = "console:local:ada"
		start := sceneStarter(t, st, space)
		start("c1", "wren-a=Wren")
		start("c2", "wren-b=Wren")
		start("c3", "tess=Tess")
		// As an older version left them: both Wrens plain "Wren", a chat
		// of Tess without cast rows, no characters.
		must(t, st.DB().Model(&models.CastMember{}).Where("card_id = ?", "wren-b").Update("name", "Wren").Error)
		must(t, st.DB().Where("card_id = ?", "tess").Delete(&models.CastMember{}).Error)
		must(t, st.UpsertCard(ctx, models.Card{ID: "tess", Name: "Tess", Data: "{}"}))
		must(t, st.DB().Where("space_id = ?", space).Delete(&models.Character{}).Error)
		for i := range 2 {
			if err := st.Migrate(ctx); err != nil {
				t.Fatalf("migrate %d: %v", i+1, err)
			}
		}
		var chars []models.Character
		must(t, st.DB().Where("space_id = ?", space).Order("name").Find(&chars).Error)
		var got []string
		for _, c := range chars {
			got = append(got, fmt.Sprintf("%s=%s/%s", c.Name, c.CardID, c.Kind))
		}
		slices.Sort(got)
		if want := []string{"Tess=tess/cast", "Wren=wren-a/cast"}; !slices.Equal(got, want) {
			t.Errorf("characters after the migration: %q, want %q", got, want)
		}
		if got := start("c4", "wren-b=Wren"); !slices.Equal(got, []string{"Wren (wren-b)"}) {
			t.Errorf("the second Wren's next chat: %q", got)
		}
		if got := start("c5", "wren-a=Wren", "tess=Tess"); !slices.Equal(got, []string{"Wren", "Tess"}) {
			t.Errorf("the first Wren's and Tess's next chat: %q", got)
		}
	})
}

// TestCastCommandsTakeTheCardsName: a member that goes by its card's name
// with its id beside it is found by the card's name alone, while no member
// goes by that name itself.
func TestCastCommandsTakeTheCardsName(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:names")
		sceneStarter(t, st, "console:local:ada")("other", "wren-a=Wren")
		_, err := st.AddCast(ctx, chat.ID, "wren-b", "Wren", 8)
		must(t, err)
		must(t, st.SetAway(ctx, chat.ID, "wren", true))
		mustCast(t, st, chat.ID, false, "Maren", "Wren (wren-b) (away)")
		_, err = st.AddCast(ctx, chat.ID, "wren-a", "Wren", 8)
		must(t, err)
		must(t, st.SetAway(ctx, chat.ID, "WREN", true))
		mustCast(t, st, chat.ID, false, "Maren", "Wren (wren-b) (away)", "Wren (away)")
		must(t, st.RemoveCast(ctx, chat.ID, "wren (WREN-B)"))
		mustCast(t, st, chat.ID, false, "Maren", "Wren (away)")
	})
}
