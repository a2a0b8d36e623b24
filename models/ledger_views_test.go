package models_test

import (
	"context"
	"slices"
	"testing"

	"troupe/models"
)

// TestLedgerViews: a scene member's own ledger is installed with its
// record, replaced by the next, read by the batch, the scene query and
// ViewLedgers, and goes with /forget; a member without one reads the
// chat's ledger only when it is the lead. The batch's presence is who
// perceived: a whisper's bystander is not present at it.
func TestLedgerViews(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:views")
		chat, err := st.Chat(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		u := &models.Message{Role: "user", AuthorName: "Tess", Content: "(to Maren) the code is 41."}
		rec := &models.TurnRecord{SpaceID: chat.SpaceID, NewTurn: true, Present: []string{"Maren", "苏砚", "Tess"}, Whisper: []string{"Maren", "Tess"},
			Actors: []string{"Tess"}, Events: [][]models.PlainEvent{{{Kind: "line", Text: "the code is 41"}}}}
		if err := st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u}, rec); err != nil {
			t.Fatal(err)
		}
		r := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "*nods*"}
		rec = &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren"}, Whisper: []string{"Maren", "Tess"},
			Actors: []string{"Maren"}, Events: [][]models.PlainEvent{{{Kind: "action", Text: "*nods*"}}}}
		if err := st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{r}, rec); err != nil {
			t.Fatal(err)
		}
		appendRecorded(t, st, chat, "Next.", "*nods*", []models.PlainEvent{{Kind: "line", Text: "Next."}}, nil)
		b, err := st.RecordBatch(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Present[u.ID]; !slices.Equal(got, []string{"Maren", "Tess"}) {
			t.Errorf("present at the whisper: %v, want only who perceived it", got)
		}
		if len(b.Views) != 0 {
			t.Errorf("views before any install: %v", b.Views)
		}
		chatLedger := `{"flags":{"code":"41"}}`
		install := func(ids []string, views map[string]string) {
			t.Helper()
			if err := st.InstallRecord(ctx, models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID, EventIDs: ids,
				Ledger: &chatLedger, Views: views}); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		for _, e := range b.Events {
			ids = append(ids, e.ID)
		}
		install(ids, map[string]string{"Maren": chatLedger, "苏砚": ""})
		install(nil, map[string]string{"Maren": `{"place":"the gate"}`})
		views, err := st.ViewLedgers(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(views) != 2 || views["Maren"] != `{"place":"the gate"}` || views["苏砚"] != "" {
			t.Errorf("views = %v, want Maren's replaced and 苏砚's empty", views)
		}
		if b, err := st.RecordBatch(ctx, chat.ID); err != nil || len(b.Views) != 2 {
			t.Errorf("batch views = %v (%v), want both", b.Views, err)
		}
		sk, err := st.Scene(ctx, chat.SpaceID, chat.ID, "苏砚")
		if err != nil || !sk.HasLedger || sk.Ledger != "" {
			t.Errorf("scene of 苏砚: ledger %q (has %v), %v; want her empty one", sk.Ledger, sk.HasLedger, err)
		}
		if sk, err := st.Scene(ctx, chat.SpaceID, chat.ID, "Elias"); err != nil || sk.HasLedger {
			t.Errorf("scene of Elias: has a ledger %v (%v), want none", sk.HasLedger, err)
		}
		lead := models.CastMember{Name: "Elias", CardID: chat.CardID}
		if got := models.MemberLedger(chat, lead, chatLedger, views); got != chatLedger {
			t.Errorf("the lead without a row reads %q, want the chat's ledger", got)
		}
		if got := models.MemberLedger(chat, models.CastMember{Name: "Wren", CardID: "other"}, chatLedger, views); got != "" {
			t.Errorf("a member without a row reads %q, want none", got)
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := st.DB().Model(&models.LedgerView{}).Count(&n).Error; err != nil || n != 0 {
			t.Errorf("%d ledger views after /forget (%v)", n, err)
		}
	})
}
