package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"troupe/models"
)

// appendRecorded stores a user message and a reply with their plain events,
// as the pipeline does: Tess speaks, Maren answers.
func appendRecorded(t *testing.T, st *models.Store, chat models.Chat, user, reply string, userEvents, replyEvents []models.PlainEvent) (u, r *models.Message) {
	t.Helper()
	ctx := context.Background()
	chat, err := st.Chat(ctx, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	u = &models.Message{Role: "user", AuthorName: "Tess", Content: user}
	rec := &models.TurnRecord{SpaceID: chat.SpaceID, NewTurn: true, Present: []string{"Maren", "Tess"},
		Actors: []string{"Tess"}, Events: [][]models.PlainEvent{userEvents}}
	if err := st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u}, rec); err != nil {
		t.Fatal(err)
	}
	r = &models.Message{Role: "assistant", AuthorName: "Maren", Content: reply}
	rec = &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren"},
		Actors: []string{"Maren"}, Events: [][]models.PlainEvent{replyEvents}}
	if err := st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{r}, rec); err != nil {
		t.Fatal(err)
	}
	return u, r
}

func TestAppendTurnWritesEventsAndPresence(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:rec1")
		u1, r1 := appendRecorded(t, st, chat, `"Open it."`, `*She turns the key.* 「好。」`,
			[]models.PlainEvent{{Kind: "line", Text: `"Open it."`}},
			[]models.PlainEvent{{Kind: "action", Text: "*She turns the key.*"}, {Kind: "line", Text: "「好。」"}})
		u2, _ := appendRecorded(t, st, chat, "((brb))", "*waits*", nil, []models.PlainEvent{{Kind: "action", Text: "*waits*"}})
		var evs []models.Event
		if err := st.DB().Where("chat_id = ?", chat.ID).Order("seq, message_id, ord").Find(&evs).Error; err != nil {
			t.Fatal(err)
		}
		if len(evs) != 4 {
			t.Fatalf("%d events, want 4: %+v", len(evs), evs)
		}
		if evs[0].MessageID != u1.ID || evs[0].Actor != "Tess" || evs[0].Kind != "line" || evs[0].Sealed {
			t.Errorf("first event = %+v, want Tess's unsealed line on %s", evs[0], u1.ID)
		}
		if evs[2].MessageID != r1.ID || evs[2].Text != "「好。」" || evs[2].Ord != 1 {
			t.Errorf("third event = %+v, want Maren's second event, verbatim", evs[2])
		}
		// A reply shares its user's turn; the next user message opens the next.
		if evs[0].Seq != evs[1].Seq || evs[3].Seq != evs[0].Seq+1 {
			t.Errorf("turn numbers %d %d %d, want n n n+1", evs[0].Seq, evs[1].Seq, evs[3].Seq)
		}
		// Presence carries over: Tess spoke in the scene, so she is present
		// at Maren's replies too, and at the OOC-only message.
		var pres []models.Presence
		if err := st.DB().Where("message_id IN ?", []string{r1.ID, u2.ID}).Order("message_id, character_name").Find(&pres).Error; err != nil {
			t.Fatal(err)
		}
		if len(pres) != 4 || pres[0].Character != "Maren" || pres[1].Character != "Tess" {
			t.Errorf("presence = %+v, want Maren and Tess at both", pres)
		}
		n, err := st.UnrecordedTurns(ctx, chat.ID, 10)
		if err != nil || n != 2 {
			t.Errorf("UnrecordedTurns = %d, %v; want 2", n, err)
		}
	})
}

func TestRecordBatchInstallAndForget(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:rec2")
		appendRecorded(t, st, chat, `"Open it."`, "*She turns the key.*",
			[]models.PlainEvent{{Kind: "line", Text: `"Open it."`}}, []models.PlainEvent{{Kind: "action", Text: "*She turns the key.*"}})
		appendRecorded(t, st, chat, `"Where now?"`, `"The west gate."`,
			[]models.PlainEvent{{Kind: "line", Text: `"Where now?"`}}, []models.PlainEvent{{Kind: "line", Text: `"The west gate."`}})
		b, err := st.RecordBatch(ctx, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The second turn waits for a later user message.
		if len(b.Events) != 2 || b.Pending != 1 {
			t.Fatalf("batch has %d events (pending %d), want the first turn's 2", len(b.Events), b.Pending)
		}
		if got := b.Present[b.Events[1].MessageID]; len(got) != 2 {
			t.Errorf("present at the reply: %v, want Maren and Tess", got)
		}
		ledger := `{"place":"the west gate"}`
		inst := models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID, EventIDs: []string{b.Events[0].ID, b.Events[1].ID},
			Enrich:        []models.Event{{ID: b.Events[1].ID, Importance: 7, About: "who holds the key", Place: "the west gate", Day: 3, Minute: 1300}},
			Perceptions:   []models.Perception{{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID, Character: "Maren", EventID: b.Events[0].ID, Mode: "heard", Text: `"Open it."`}},
			Threads:       []models.Thread{{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID, Kind: "mystery", Text: "Who took the key?", Open: true, OpenedBy: b.Events[1].ID}},
			Ledger:        &ledger,
			Entities:      []models.Entity{{ID: models.NewID(), SpaceID: chat.SpaceID, Name: "the west gate", Kind: "place", ChatID: chat.ID}},
			Relationships: []models.Relationship{{FromName: "Maren", ToName: "Tess", Description: "a new acquaintance", EventID: b.Events[0].ID}},
			Knowledge:     []models.Knowledge{{Character: "Maren", EntityID: "the west gate", EventID: b.Events[1].ID}},
			Characters:    []models.Character{{ID: models.NewID(), SpaceID: chat.SpaceID, Name: "Maren", Kind: models.CharacterCast, CardID: "maren"}},
		}
		if err := st.InstallRecord(ctx, inst); err != nil {
			t.Fatal(err)
		}
		// The batch is sealed; what the recorder said of an event is
		// written to it, and an event it said nothing of keeps its own.
		var evs []models.Event
		must(t, st.DB().Where("id IN ?", inst.EventIDs).Find(&evs).Error)
		for _, e := range evs {
			want := models.Event{Importance: b.Events[0].Importance, About: b.Events[0].About, Place: b.Events[0].Place, Day: b.Events[0].Day, Minute: b.Events[0].Minute}
			if e.ID == b.Events[1].ID {
				want = inst.Enrich[0]
			}
			if !e.Sealed || e.Importance != want.Importance || e.About != want.About || e.Place != want.Place || e.Day != want.Day || e.Minute != want.Minute {
				t.Errorf("event %s after install: sealed %v, importance %d, about %q, place %q, day %d, minute %d; want sealed, %d, %q, %q, %d, %d",
					e.Text, e.Sealed, e.Importance, e.About, e.Place, e.Day, e.Minute, want.Importance, want.About, want.Place, want.Day, want.Minute)
			}
		}
		if len(evs) != 2 {
			t.Errorf("%d events of the batch, want 2", len(evs))
		}
		// Installing the same batch again finds it sealed: nothing twice.
		if err := st.InstallRecord(ctx, inst); !errors.Is(err, models.ErrStale) {
			t.Errorf("second install: %v, want ErrStale", err)
		}
		b2, err := st.RecordBatch(ctx, chat.ID)
		if err != nil || len(b2.Events) != 0 || b2.LastDay != 3 || b2.Ledger != ledger {
			t.Errorf("after install: %d events owed, last day %d, ledger %q, %v", len(b2.Events), b2.LastDay, b2.Ledger, err)
		}
		var k []models.Knowledge
		st.DB().Where("chat_id = ?", chat.ID).Find(&k)
		if len(k) != 1 || k[0].EntityID != inst.Entities[0].ID {
			t.Fatalf("knowledge = %+v, want Maren knowing the gate", k)
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		for _, m := range []any{&models.Event{}, &models.Perception{}, &models.Presence{}, &models.Thread{}, &models.Relationship{}, &models.Knowledge{}, &models.Entity{}} {
			var n int64
			if err := st.DB().Model(m).Count(&n).Error; err != nil || n != 0 {
				t.Errorf("%T: %d rows left after /forget (%v)", m, n, err)
			}
		}
		var cast int64
		st.DB().Model(&models.Character{}).Count(&cast)
		if cast != 1 {
			t.Errorf("%d characters after /forget, want the cast card kept", cast)
		}
	})
}

// Forgetting a chat removes the background characters it introduced that
// nothing else mentions; one another chat's ledger still names passes to
// that chat, and goes when that chat is forgotten too.
func TestForgetRemovesBackgroundCharactersByProvenance(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		a := newChat(t, st, "console:bgA")
		b := newChat(t, st, "console:bgB")
		ledgerA := `{"roster":["the ferryman","the old guard"]}`
		ledgerB := `{"where":{"the ferryman":"the pier"}}`
		long := "the " + strings.Repeat("very ", 60) + "tall stranger"
		bg := func(chat models.Chat, name string) models.Character {
			return models.Character{ID: models.NewID(), SpaceID: chat.SpaceID, Name: models.FitName(name, models.NameSize),
				Kind: models.CharacterBackground, ChatID: chat.ID}
		}
		if err := st.InstallRecord(ctx, models.RecordInstall{ChatID: a.ID, SpaceID: a.SpaceID, Ledger: &ledgerA,
			Characters: []models.Character{bg(a, "the ferryman"), bg(a, "the old guard"), bg(a, long)}}); err != nil {
			t.Fatal(err)
		}
		// Chat b meets the ferryman too: its row stays chat a's.
		if err := st.InstallRecord(ctx, models.RecordInstall{ChatID: b.ID, SpaceID: b.SpaceID, Ledger: &ledgerB,
			Characters: []models.Character{bg(b, "the ferryman")}}); err != nil {
			t.Fatal(err)
		}
		chars := func() map[string]string {
			var cs []models.Character
			if err := st.DB().Where("space_id = ? AND kind = ?", a.SpaceID, models.CharacterBackground).Find(&cs).Error; err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, c := range cs {
				out[c.Name] = c.ChatID
			}
			return out
		}
		if got := chars(); len(got) != 3 || got["the ferryman"] != a.ID {
			t.Fatalf("background characters %v, want three, the ferryman introduced by chat a", got)
		}
		if _, err := st.ForgetChat(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if got := chars(); len(got) != 1 || got["the ferryman"] != b.ID {
			t.Fatalf("after forgetting chat a: %v, want only the ferryman, now chat b's", got)
		}
		if _, err := st.ForgetChat(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if got := chars(); len(got) != 0 {
			t.Fatalf("after forgetting chat b: %v, want none", got)
		}
	})
}

// TestReplyTakesItsTurnsNumber: a reply is part of the turn it answers,
// whatever other chats of the space began meanwhile: its events take its
// user message's turn number, so a chat counts one turn per exchange. A
// reply whose parent has no events takes the space's latest.
func TestReplyTakesItsTurnsNumber(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		a, b := newChat(t, st, "console:turn-a"), newChat(t, st, "console:turn-b")
		open := func(chat models.Chat, text string) *models.Message {
			t.Helper()
			chat, err := st.Chat(ctx, chat.ID)
			if err != nil {
				t.Fatal(err)
			}
			u := &models.Message{Role: "user", AuthorName: "Tess", Content: text}
			if err := st.AppendTurn(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{u}, &models.TurnRecord{SpaceID: chat.SpaceID, NewTurn: true,
				Present: []string{"Maren", "Tess"}, Actors: []string{"Tess"}, Events: [][]models.PlainEvent{{{Kind: "line", Text: text}}}}); err != nil {
				t.Fatal(err)
			}
			return u
		}
		answer := func(chat models.Chat, parent *models.Message, events []models.PlainEvent) *models.Message {
			t.Helper()
			r := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "Aye."}
			if err := st.AppendTurn(ctx, chat.ID, parent.ID, parent.ID, []*models.Message{r}, &models.TurnRecord{SpaceID: chat.SpaceID,
				Present: []string{"Maren"}, Actors: []string{"Maren"}, Events: [][]models.PlainEvent{events}}); err != nil {
				t.Fatal(err)
			}
			return r
		}
		seq := func(m *models.Message) int64 {
			t.Helper()
			var evs []models.Event
			if err := st.DB().Where("message_id = ?", m.ID).Find(&evs).Error; err != nil || len(evs) == 0 {
				t.Fatalf("events of %s: %v, %v", m.Content, evs, err)
			}
			for _, e := range evs[1:] {
				if e.Seq != evs[0].Seq {
					t.Fatalf("the events of one message have turns %d and %d", evs[0].Seq, e.Seq)
				}
			}
			return evs[0].Seq
		}
		line := []models.PlainEvent{{Kind: "line", Text: "Aye."}}
		ua := open(a, "Where is the boat?")
		ub := open(b, "Who rang the bell?")
		ra := answer(a, ua, line)
		rb := answer(b, ub, line)
		ra2 := answer(a, ra, []models.PlainEvent{{Kind: "action", Text: "*points*"}})
		if seq(ua) == seq(ub) {
			t.Fatalf("two chats' turns share the number %d", seq(ua))
		}
		if seq(ra) != seq(ua) || seq(ra2) != seq(ua) || seq(rb) != seq(ub) {
			t.Errorf("turns: a %d, its replies %d and %d; b %d, its reply %d; want each reply in its turn", seq(ua), seq(ra), seq(ra2), seq(ub), seq(rb))
		}
		var turns int64
		if err := st.DB().Model(&models.Event{}).Where("chat_id = ?", a.ID).Distinct("seq").Count(&turns).Error; err != nil || turns != 1 {
			t.Errorf("chat a counts %d turns (%v), want 1", turns, err)
		}
		// No events at the parent (an out-of-character line): the space's
		// latest turn.
		uc := &models.Message{Role: "user", AuthorName: "Tess", Content: "((brb))"}
		chatA, err := st.Chat(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AppendTurn(ctx, a.ID, chatA.HeadID, chatA.HeadID, []*models.Message{uc}, &models.TurnRecord{SpaceID: a.SpaceID, NewTurn: true,
			Present: []string{"Maren", "Tess"}, Actors: []string{"Tess"}, Events: [][]models.PlainEvent{nil}}); err != nil {
			t.Fatal(err)
		}
		if rc := answer(a, uc, line); seq(rc) != seq(ub)+1 {
			t.Errorf("a reply to a message without events has turn %d, want the space's latest, %d", seq(rc), seq(ub)+1)
		}
	})
}
