package models_test

import (
	"context"
	"testing"
	"time"

	"troupe/belief"
	"troupe/models"
	"troupe/models/testenv"
)

// On PostgreSQL a memory job holding its chat's lock does not hold up the
// chat's turns: a turn stores its messages (moving the head), keeps its
// recall block and counts what it recalled while a summary install and a
// reflection install citing the recalled perception sit in their
// transactions. (On SQLite every write transaction runs alone.)
func TestTurnWritesDoNotWaitForMemoryJobs(t *testing.T) {
	testenv.Require(t)
	st := testenv.OpenStore(t, testenv.Backend{Name: "postgres", DSN: testenv.FreshPostgresDB(t)})
	ctx := context.Background()
	chat := newChat(t, st, "console:locks")
	appendRecorded(t, st, chat, "The boat is blue.", "Aye.",
		[]models.PlainEvent{{Kind: "line", Text: "The boat is blue."}}, []models.PlainEvent{{Kind: "line", Text: "Aye."}})
	appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
	recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": "The boat is blue."}})
	pid := perceptionID(t, st, "Maren", "The boat is blue.")
	_, reply := appendBeat(t, st, chat.ID, 1)

	installs := map[string]func(context.Context) error{
		"install summary": func(ctx context.Context) error {
			_, err := st.InstallSummary(ctx, chat.ID, "", reply.ID, "A blue boat.", 1)
			return err
		},
		"install reflection": func(ctx context.Context) error {
			b := belief.Belief{ID: models.NewID(), Text: "The blue boat is Ada's.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
				Evidence: []belief.Evidence{{Perception: pid, Turn: 1, Stance: belief.Supports}}}
			return st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
				Changes: belief.Changes{Created: []belief.Belief{b}}})
		},
	}
	for point, install := range installs {
		t.Run(point, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			reached, release := make(chan struct{}), make(chan struct{})
			models.SetPause(st, func(p string) {
				if p == point {
					close(reached)
					<-release
				}
			})
			defer models.SetPause(st, nil)
			installed := make(chan error, 1)
			go func() { installed <- install(ctx) }()
			select {
			case <-reached:
			case err := <-installed:
				t.Fatalf("the install ended before its pause: %v", err)
			}
			turn := make(chan error, 1)
			go func() { turn <- turnWrites(ctx, st, chat.ID, pid) }()
			var err error
			select {
			case err = <-turn:
			case <-time.After(10 * time.Second):
				t.Errorf("the turn's writes waited for the paused %s", point)
				close(release)
				err = <-turn
				release = nil
			}
			if err != nil {
				t.Errorf("turn: %v", err)
			}
			if release != nil {
				close(release)
			}
			if err := <-installed; err != nil {
				t.Errorf("%s: %v", point, err)
			}
		})
	}
}

// turnWrites makes a turn's writes: its message and reply, its kept recall
// block showing pid, and the count of pid's recall.
func turnWrites(ctx context.Context, st *models.Store, chatID, pid string) error {
	chat, err := st.Chat(ctx, chatID)
	if err != nil {
		return err
	}
	user := &models.Message{Role: "user", Content: "where is the boat?"}
	if err := st.Append(ctx, chatID, chat.HeadID, chat.HeadID, []*models.Message{user}); err != nil {
		return err
	}
	if err := st.Append(ctx, chatID, user.ID, user.ID, []*models.Message{{Role: "assistant", Content: "At the pier."}}); err != nil {
		return err
	}
	if err := st.KeepRecall(ctx, models.RecallKept{MessageID: user.ID, Character: "Maren", ChatID: chatID, Text: "[Remembered] the boat"}, []string{pid}); err != nil {
		return err
	}
	return st.NoteRecall(ctx, models.RecallDone{Perceptions: []string{pid}})
}
