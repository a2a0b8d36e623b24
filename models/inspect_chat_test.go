package models_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"troupe/models"
)

// TestTranscriptPageAndPageSummaries: a page of a branch ends where it is
// asked to, in order, with the reply a /regen replaced beside its sibling
// and presence per message; PageSummaries finds what ActiveSummaries does
// (a one-card chat's summary, a scene's per view) without reading texts.
func TestTranscriptPageAndPageSummaries(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:page")
		if got, err := st.PageSummaries(ctx, chat); err != nil || got != nil {
			t.Fatalf("summaries of a fresh chat: %v, %v", got, err)
		}
		u := &models.Message{Role: "user", AuthorName: "Tess", Content: "hello"}
		must(t, st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u},
			&models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren", "Tess"}, Whisper: []string{"Maren"}}))
		r1 := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "one"}
		must(t, st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{r1}, nil))
		r2 := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "two"}
		must(t, st.AppendTurn(ctx, chat.ID, r1.ID, u.ID, []*models.Message{r2}, nil))
		tr, err := st.TranscriptPage(ctx, chat.ID, r2.ID, 2)
		must(t, err)
		if len(tr.Messages) != 2 || tr.Messages[0].ID != u.ID || tr.Messages[1].ID != r2.ID {
			t.Fatalf("page: %+v, want the user line then the head", tr.Messages)
		}
		if tr.Earlier != chat.HeadID {
			t.Errorf("earlier = %q, want the greeting %q", tr.Earlier, chat.HeadID)
		}
		if off := tr.Off[u.ID]; len(off) != 1 || off[0].ID != r1.ID {
			t.Errorf("off the branch under the user line: %+v, want the replaced reply", off)
		}
		if p := tr.Messages[0]; !reflect.DeepEqual(p.Present, []string{"Maren"}) || !reflect.DeepEqual(p.Unheard, []string{"Tess"}) {
			t.Errorf("presence at the whisper: present %v, unheard %v", p.Present, p.Unheard)
		}
		if _, err := st.TranscriptPage(ctx, "no-such-chat", r2.ID, 10); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("a page of another chat's message: %v, want ErrNotFound", err)
		}
		if _, err := st.InstallSummary(ctx, chat.ID, "", u.ID, "they met", 1); err != nil {
			t.Fatal(err)
		}
		chat, err = st.Chat(ctx, chat.ID)
		must(t, err)
		want, err := st.ActiveSummaries(ctx, chat)
		must(t, err)
		got, err := st.PageSummaries(ctx, chat)
		must(t, err)
		if len(want) != 1 || !reflect.DeepEqual(got, want) {
			t.Errorf("page summaries %+v, active %+v", got, want)
		}
		// A scene: each view's summary.
		must(t, st.UpsertCard(ctx, models.Card{ID: "elias", Name: "Elias", Data: "{}"}))
		scene, cast, err := st.StartScene(ctx, models.ChatStart{ChannelID: "console:page", SpaceID: chat.SpaceID, Name: "scene",
			Cast: []models.CastMember{{CardID: "maren"}, {CardID: "elias"}}})
		must(t, err)
		a := &models.Message{Role: "user", AuthorName: "Tess", Content: "a"}
		must(t, st.AppendTurn(ctx, scene.ID, "", "", []*models.Message{a}, nil))
		_, err = st.InstallViews(ctx, scene.ID, a.ID, []models.ViewSummary{{Members: []string{cast[0].Name}, Content: "hers"}, {Members: []string{cast[1].Name}, Content: "his"}})
		must(t, err)
		scene, err = st.Chat(ctx, scene.ID)
		must(t, err)
		want, err = st.ActiveSummaries(ctx, scene)
		must(t, err)
		got, err = st.PageSummaries(ctx, scene)
		must(t, err)
		if len(want) != 2 || !reflect.DeepEqual(got, want) {
			t.Errorf("scene: page summaries %+v, active %+v", got, want)
		}
		p, err := st.ChatPulse(ctx, scene.ID)
		if err != nil || p.HeadID != a.ID || p.Messages != 1 {
			t.Errorf("pulse = %+v, %v", p, err)
		}
	})
}
