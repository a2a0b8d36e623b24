package models_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"troupe/models"
)

// TestDeleteRecapOfAScene deletes by hand the recaps the cast cards of a
// scene keep: one card's when it is named, every card's otherwise; each
// card's handbook and resident lose the chat's lines and keep the others',
// and the other cards and chats are left alone.
func TestDeleteRecapOfAScene(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newScene(t, st, "console:scene-recap").chat
		other := newChat(t, st, "console:other-recap")
		space := chat.SpaceID
		tag := func(id string) string { return "[chat:" + id + "]" }
		install := func(cardID string, lines ...string) {
			t.Helper()
			cur, err := st.LoadMemory(ctx, cardID, space)
			must(t, err)
			text := strings.Join(lines, "\n")
			must(t, st.InstallConsolidation(ctx, models.Consolidation{CardID: cardID, SpaceID: space, Version: cur.Version(),
				Handbook: text, Resident: text, Merged: map[string]string{chat.ID: "h-" + cardID}}))
		}
		must(t, st.InstallRecap(ctx, models.Recap{ChatID: chat.ID, CardID: "maren", Content: "# hers", Hash: "h-maren", Fingerprint: "f1"}))
		must(t, st.InstallRecap(ctx, models.Recap{ChatID: chat.ID, CardID: "elias", Content: "# his", Hash: "h-elias", Fingerprint: "f2"}))
		must(t, st.InstallRecap(ctx, models.Recap{ChatID: other.ID, CardID: "maren", Content: "# other", Hash: "h-other", Fingerprint: "f3"}))
		install("maren", "- the ferry leaves at dawn "+tag(chat.ID), "- the tea is bitter "+tag(other.ID))
		install("elias", "- the gate key is under the stone "+tag(chat.ID), "- the gate creaks "+tag("01OLDCHAT"))
		memory := func(cardID string) string {
			t.Helper()
			m, err := st.LoadMemory(ctx, cardID, space)
			must(t, err)
			return m.Handbook + "\n---\n" + m.Resident
		}
		recapCards := func(chatID string) []string {
			t.Helper()
			rs, err := st.ChatRecaps(ctx, chatID)
			must(t, err)
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.CardID)
			}
			return ids
		}
		marenBefore := memory("maren")
		if !strings.Contains(marenBefore, tag(chat.ID)) || !strings.Contains(memory("elias"), tag(chat.ID)) {
			t.Fatalf("positive control: the memories do not hold the chat's lines: %q / %q", marenBefore, memory("elias"))
		}

		// One named card: only its recap and lines go.
		keys, err := st.DeleteRecap(ctx, chat.ID, "elias")
		must(t, err)
		if want := []models.MemoryKey{{CardID: "elias", SpaceID: space}}; !slices.Equal(keys, want) {
			t.Errorf("keys = %v, want %v", keys, want)
		}
		if got := recapCards(chat.ID); !slices.Equal(got, []string{"maren"}) {
			t.Errorf("recaps left of the scene: %v, want Maren's", got)
		}
		if m := memory("elias"); strings.Contains(m, tag(chat.ID)) || strings.Count(m, tag("01OLDCHAT")) != 2 {
			t.Errorf("Elias's memory after his recap went: %q", m)
		}
		if m := memory("maren"); m != marenBefore {
			t.Errorf("Maren's memory changed when only Elias's recap went: %q", m)
		}
		if _, err := st.DeleteRecap(ctx, chat.ID, "elias"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("deleting Elias's recap again: err = %v, want ErrNotFound", err)
		}
		// A card id longer than the id columns is fitted, not refused by
		// PostgreSQL.
		if _, err := st.DeleteRecap(ctx, chat.ID, strings.Repeat("long-card-", 20)); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("deleting the recap of a long unknown card id: err = %v, want ErrNotFound", err)
		}

		// No card: every cast card's recap of the chat goes.
		must(t, st.InstallRecap(ctx, models.Recap{ChatID: chat.ID, CardID: "elias", Content: "# his again", Hash: "h-elias2", Fingerprint: "f4"}))
		keys, err = st.DeleteRecap(ctx, chat.ID, "")
		must(t, err)
		if want := []models.MemoryKey{{CardID: "elias", SpaceID: space}, {CardID: "maren", SpaceID: space}}; !slices.Equal(keys, want) {
			t.Errorf("keys = %v, want %v", keys, want)
		}
		if got := recapCards(chat.ID); len(got) != 0 {
			t.Errorf("recaps left of the scene: %v, want none", got)
		}
		if m := memory("maren"); strings.Contains(m, tag(chat.ID)) || strings.Count(m, tag(other.ID)) != 2 {
			t.Errorf("Maren's memory after the scene's recaps went: %q", m)
		}
		if got := recapCards(other.ID); !slices.Equal(got, []string{"maren"}) {
			t.Errorf("the other chat's recaps: %v, want Maren's kept", got)
		}
		owed, err := st.OwedConsolidations(ctx)
		must(t, err)
		if !slices.Contains(owed, models.MemoryKey{CardID: "maren", SpaceID: space}) {
			t.Errorf("owed consolidations %v: Maren's memory is not rebuilt", owed)
		}
		if _, err := st.DeleteRecap(ctx, chat.ID, ""); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("deleting the scene's recaps again: err = %v, want ErrNotFound", err)
		}
	})
}
