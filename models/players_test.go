package models_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"troupe/models"
)

// TestPlayersOfAChat: the presence at a message names the players carried
// along the branch; a chat's authors come in the order they last wrote,
// the latest first (refused lines left out); personas are read by key,
// long ones too.
func TestPlayersOfAChat(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:players")
		long := strings.Repeat("Ŋ", 300)
		head := chat.HeadID
		for _, m := range []struct{ id, name, present string }{{"b", "Bob", "Bob"}, {"a", "Ada", long}, {"b", "Bob", "Bob"}, {"a", "Ada", long}} {
			u := &models.Message{Role: "user", AuthorID: m.id, AuthorName: m.name, Content: "hello from " + m.name}
			must(t, st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{u},
				&models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren", m.present}, Cast: []string{"Maren"}}))
			head = u.ID
		}
		refused := &models.Message{Role: "user", AuthorID: "c", AuthorName: "Cy", Content: "too long"}
		must(t, st.AppendRefused(ctx, chat.ID, head, refused))

		present, err := st.PresentAt(ctx, head)
		must(t, err)
		if want := []string{models.FitName(long, models.NameSize), "Bob", "Maren"}; !sameSet(present, want) {
			t.Errorf("present at the last message = %q, want %q", present, want)
		}
		authors, err := st.ChatAuthors(ctx, chat.ID)
		must(t, err)
		if want := []models.Author{{ID: "a", Name: "Ada"}, {ID: "b", Name: "Bob"}}; !slices.Equal(authors, want) {
			t.Errorf("authors = %+v, want %+v", authors, want)
		}

		key := "discord:" + strings.Repeat("9", 100)
		must(t, st.SetPersona(ctx, models.Persona{UserKey: key, Name: "Brannoc", Description: "Gloves."}))
		per, err := st.Personas(ctx, []string{key, "discord:nobody"})
		must(t, err)
		if len(per) != 1 || per[key].Name != "Brannoc" {
			t.Errorf("personas = %+v, want Brannoc's alone", per)
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
