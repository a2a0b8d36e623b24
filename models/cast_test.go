package models_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"troupe/models"
)

// castNames lists the names of cast, with "(away)" and "(left)" marks.
func castNames(cast []models.CastMember) []string {
	var out []string
	for _, m := range cast {
		n := m.Name
		if m.Away {
			n += " (away)"
		}
		if !m.Active() {
			n += " (left)"
		}
		out = append(out, n)
	}
	return out
}

func mustCast(t *testing.T, st *models.Store, chatID string, withRemoved bool, want ...string) {
	t.Helper()
	cast, err := st.Cast(context.Background(), chatID, withRemoved)
	if err != nil {
		t.Fatal(err)
	}
	if got := castNames(cast); !slices.Equal(got, want) {
		t.Fatalf("cast = %q, want %q", got, want)
	}
}

func TestCastAddRemoveAway(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:cast")
		mustCast(t, st, chat.ID, false, "Maren")
		if _, err := st.AddCast(ctx, chat.ID, "elias", "Elias", 8); err != nil {
			t.Fatal(err)
		}
		// A second card under a name the space has gets its id beside it.
		m, err := st.AddCast(ctx, chat.ID, "maren-alt", "maren", 8)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != "maren (maren-alt)" {
			t.Errorf("second Maren named %q, want %q", m.Name, "maren (maren-alt)")
		}
		mustCast(t, st, chat.ID, false, "Maren", "Elias", "maren (maren-alt)")
		if _, err := st.AddCast(ctx, chat.ID, "elias", "Elias", 8); !errors.Is(err, models.ErrInCast) {
			t.Errorf("adding a member again: err = %v, want ErrInCast", err)
		}
		if _, err := st.AddCast(ctx, chat.ID, "tess", "Tess", 3); !errors.Is(err, models.ErrCastFull) {
			t.Errorf("adding past max: err = %v, want ErrCastFull", err)
		}
		if err := st.SetAway(ctx, chat.ID, "ELIAS", true); err != nil {
			t.Fatal(err)
		}
		mustCast(t, st, chat.ID, false, "Maren", "Elias (away)", "maren (maren-alt)")
		if err := st.SetAway(ctx, chat.ID, "nobody", true); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("away of a stranger: err = %v, want ErrNotFound", err)
		}
		if err := st.RemoveCast(ctx, chat.ID, "Elias"); err != nil {
			t.Fatal(err)
		}
		mustCast(t, st, chat.ID, false, "Maren", "maren (maren-alt)")
		mustCast(t, st, chat.ID, true, "Maren", "Elias (left)", "maren (maren-alt)")
		// Back under the same name, no longer away, in its old place.
		if m, err := st.AddCast(ctx, chat.ID, "elias", "Someone Else", 8); err != nil || m.Name != "Elias" {
			t.Fatalf("re-add = %q, %v; want Elias", m.Name, err)
		}
		mustCast(t, st, chat.ID, false, "Maren", "Elias", "maren (maren-alt)")
		must(t, st.RemoveCast(ctx, chat.ID, "Elias"))
		must(t, st.RemoveCast(ctx, chat.ID, "maren (maren-alt)"))
		if err := st.RemoveCast(ctx, chat.ID, "Maren"); !errors.Is(err, models.ErrLastMember) {
			t.Errorf("removing the last member: err = %v, want ErrLastMember", err)
		}
		if err := st.RemoveCast(ctx, chat.ID, "Elias"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("removing a removed member: err = %v, want ErrNotFound", err)
		}
		mustCast(t, st, chat.ID, false, "Maren")
		if _, err := st.Cast(ctx, "01NOSUCHCHAT0000000000000", false); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("cast of no chat: err = %v, want ErrNotFound", err)
		}
	})
}

// TestCastOfOlderChat: a chat stored before casts existed has no rows; it
// reads as a cast of its card, and the first change writes that row.
func TestCastOfOlderChat(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:old")
		must(t, st.DB().Where("chat_id = ?", chat.ID).Delete(&models.CastMember{}).Error)
		mustCast(t, st, chat.ID, false, "Maren")
		if _, err := st.AddCast(ctx, chat.ID, "elias", "Elias", 8); err != nil {
			t.Fatal(err)
		}
		mustCast(t, st, chat.ID, false, "Maren", "Elias")
		ts, err := st.TurnState(ctx, "console:old", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := castNames(ts.Cast); !slices.Equal(got, []string{"Maren", "Elias"}) {
			t.Errorf("turn state cast = %q", got)
		}
	})
}

// TestCastLongNames: names and card ids longer than their columns are
// fitted on both databases, and presence finds the fitted name.
func TestCastLongNames(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:long")
		long := strings.Repeat("Ŋ", 300)
		m, err := st.AddCast(ctx, chat.ID, strings.Repeat("c", 100), long, 8)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddCast(ctx, chat.ID, strings.Repeat("d", 100), long, 8); err != nil {
			t.Fatal(err)
		}
		cast, err := st.Cast(ctx, chat.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(cast) != 3 || cast[1].Name == cast[2].Name {
			t.Fatalf("cast = %q, want three distinct names", castNames(cast))
		}
		u := &models.Message{Role: "user", Content: "hello"}
		rec := &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren", long, "Ada"}, Cast: []string{"Maren", m.Name}}
		must(t, st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u}, rec))
		ids, err := st.PerceivedAfter(ctx, chat.ID, long, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ids, u.ID) {
			t.Errorf("the long-named member's messages %v lack %s", ids, u.ID)
		}
	})
}

// TestPresencePerCharacter: what each character perceived, per message, in
// order: away members miss messages, whispers reach only their two, players
// carry over along the branch (past a whisper too), and cast members do not.
func TestPresencePerCharacter(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		must(t, st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
		_, err := st.EnsureChannel(ctx, models.Channel{ID: "console:scene", Platform: "console", ExternalID: "scene", SpaceID: "console:local:ada"})
		must(t, err)
		chat, cast, err := st.StartScene(ctx, models.ChatStart{ChannelID: "console:scene", SpaceID: "console:local:ada",
			Cast:     []models.CastMember{{CardID: "mara", Name: "Mara"}, {CardID: "elias", Name: "Elias"}},
			Openings: []*models.Message{{Role: "assistant", Content: "hi", SpeakerCardID: "mara"}, {Role: "assistant", Content: "ho", SpeakerCardID: "elias"}}})
		must(t, err)
		if len(cast) != 2 || chat.CardID != "mara" {
			t.Fatalf("scene cast = %q, lead %q", castNames(cast), chat.CardID)
		}
		all := []string{"Mara", "Elias"}
		head := chat.HeadID
		add := func(role, speaker string, rec models.TurnRecord) string {
			t.Helper()
			m := &models.Message{Role: role, Content: role + " line", SpeakerCardID: speaker}
			rec.SpaceID, rec.Cast = chat.SpaceID, all
			must(t, st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{m}, &rec))
			head = m.ID
			return m.ID
		}
		u1 := add("user", "", models.TurnRecord{Present: []string{"Mara", "Elias", "Ada"}})
		r1 := add("assistant", "mara", models.TurnRecord{Present: []string{"Mara", "Elias"}})
		// Elias away: not listed, and not carried over from the parent.
		u2 := add("user", "", models.TurnRecord{Present: []string{"Mara", "Bo"}})
		r2 := add("assistant", "mara", models.TurnRecord{Present: []string{"Mara"}})
		// Bo whispers to Mara: Ada is carried along, but does not hear it.
		w := add("user", "", models.TurnRecord{Present: []string{"Bo", "Mara"}, Whisper: []string{"Bo", "Mara"}})
		u3 := add("user", "", models.TurnRecord{Present: []string{"Mara", "Elias"}})

		ts, err := st.TurnState(ctx, "console:scene", "")
		must(t, err)
		if ts.LastSpeaker != "" {
			t.Errorf("last speaker with a user head and parent = %q, want none", ts.LastSpeaker)
		}
		for _, tc := range []struct {
			who  string
			want []string
		}{
			{"Mara", []string{u1, r1, u2, r2, w, u3}},
			{"Elias", []string{u1, r1, u3}},
			{"Ada", []string{u1, r1, u2, r2, u3}},
			{"Bo", []string{u2, r2, w, u3}},
		} {
			got, err := st.PerceivedAfter(ctx, chat.ID, tc.who, chat.HeadID, 100)
			must(t, err)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s perceived %v, want %v", tc.who, got, tc.want)
			}
		}
		// After an id, and limited: a range of the character's own rows.
		if got, _ := st.PerceivedAfter(ctx, chat.ID, "Mara", r1, 2); !slices.Equal(got, []string{u2, r2}) {
			t.Errorf("Mara after r1, two: %v, want %v", got, []string{u2, r2})
		}
		// Both openings were perceived by the whole cast.
		first, err := st.PerceivedAfter(ctx, chat.ID, "Elias", "", 2)
		must(t, err)
		if len(first) != 2 || first[1] != chat.HeadID {
			t.Errorf("Elias's first messages %v, want both openings ending at %s", first, chat.HeadID)
		}
		// A message stored without presence is everyone's.
		legacy := &models.Message{Role: "user", Content: "old"}
		must(t, st.Append(ctx, chat.ID, head, head, []*models.Message{legacy}))
		got, err := st.PerceivedOf(ctx, "Elias", []string{u1, u2, w, legacy.ID})
		must(t, err)
		want := map[string]bool{u1: true, u2: false, w: false}
		if len(got) != len(want) || got[u1] != true || got[u2] || got[w] {
			t.Errorf("PerceivedOf(Elias) = %v, want %v (legacy %s missing)", got, want, legacy.ID)
		}
	})
}

// TestTurnStateLastSpeaker: the speaker of the head's reply, the lead for
// a reply of an older row.
func TestTurnStateLastSpeaker(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:last")
		ts, err := st.TurnState(ctx, "console:last", "")
		must(t, err)
		if ts.LastSpeaker != "maren" {
			t.Errorf("after the greeting: last speaker %q, want maren (the lead)", ts.LastSpeaker)
		}
		u := &models.Message{Role: "user", Content: "hi"}
		r := &models.Message{Role: "assistant", Content: "yo", SpeakerCardID: "elias"}
		must(t, st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u, r}))
		ts, err = st.TurnState(ctx, "console:last", "")
		must(t, err)
		if ts.LastSpeaker != "elias" {
			t.Errorf("last speaker %q, want elias", ts.LastSpeaker)
		}
		got, err := st.Message(ctx, r.ID)
		must(t, err)
		if got.SpeakerCardID != "elias" {
			t.Errorf("stored speaker %q, want elias", got.SpeakerCardID)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
