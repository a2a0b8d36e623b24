package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

// seedRecordableChat stores a chat of beats with their plain events and
// presence, as turns store them, so the recorder owes every beat but the
// last.
func seedRecordableChat(t *testing.T, dsn string, beats int) string {
	t.Helper()
	chatID := seedOwedChat(t, dsn, 0)
	ctx := context.Background()
	st, err := models.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chat, err := st.Chat(ctx, chatID)
	if err != nil {
		t.Fatal(err)
	}
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf(`"Beat %d: where is the key?"`, i)}
		rec := &models.TurnRecord{SpaceID: chat.SpaceID, NewTurn: true, Present: []string{"Maren", "Ada"}, Actors: []string{"Ada"},
			Events: [][]models.PlainEvent{{{Kind: "line", Text: u.Content}}}}
		if err := st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{u}, rec); err != nil {
			t.Fatal(err)
		}
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "*She trims the wick.*"}
		rec = &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren"}, Actors: []string{"Maren"},
			Events: [][]models.PlainEvent{{{Kind: "action", Text: a.Content}}}}
		if err := st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{a}, rec); err != nil {
			t.Fatal(err)
		}
		head = a.ID
	}
	return chatID
}

// checkRecordWhole checks that a chat's record is all or nothing: either no
// event is sealed and nothing the recorder writes exists, or the events of
// the batch are sealed with their perceptions, threads and ledger.
func checkRecordWhole(t *testing.T, st *models.Store, chatID string) (sealed bool) {
	t.Helper()
	var n, s, ps, ths, ledgers int64
	snapshot(t, st, func(tx *gorm.DB) error {
		return errors.Join(
			tx.Model(&models.Event{}).Where("chat_id = ?", chatID).Count(&n).Error,
			tx.Model(&models.Event{}).Where("chat_id = ? AND sealed = ?", chatID, true).Count(&s).Error,
			tx.Model(&models.Perception{}).Where("chat_id = ?", chatID).Count(&ps).Error,
			tx.Model(&models.Thread{}).Where("chat_id = ?", chatID).Count(&ths).Error,
			tx.Model(&models.Ledger{}).Where("chat_id = ?", chatID).Count(&ledgers).Error)
	})
	switch {
	case s == 0 && ps == 0 && ths == 0 && ledgers == 0:
		return false
	case s == n-2 && ps == s && ths == 1 && ledgers == 1:
		// Every event but the newest turn's two (which wait for a later
		// user message) is sealed, each perceived by Maren.
		return true
	}
	t.Fatalf("a half-written batch: %d of %d events sealed, %d perceptions, %d threads, %d ledgers", s, n, ps, ths, ledgers)
	return false
}

// TestWorkerKilledMidRecorder kills the worker (SIGKILL) while the scribe
// answers the recorder, or just after: the batch is installed whole or not
// at all, and a restarted worker's sweeper records it.
func TestWorkerKilledMidRecorder(t *testing.T) {
	bin := troupeBinary(t)
	for round := 0; round < crashRounds(); round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			t.Parallel() // each round has its own store, fake model and worker
			dsn := sqliteDSN(t)
			chatID := seedRecordableChat(t, dsn, 8)
			killMidScribe(t, bin, round, scribeCrash{dsn: dsn, what: "record", envs: []string{"TROUPE_RECORDER_BATCH=3"},
				target:  func(req openaitest.Request) bool { return memorytest.Kind(req) == "record" },
				respond: (&memorytest.Scribe{}).Respond,
				whole:   func(t *testing.T, st *models.Store) bool { return checkRecordWhole(t, st, chatID) }})
		})
	}
}
