package models_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"troupe/models"
)

func waiting(channel, text, key string) *models.InboxMessage {
	m := &models.InboxMessage{ChannelID: channel, Platform: "console", Ref: "{}", AuthorID: "ada", AuthorName: "Ada", Content: text}
	if key != "" {
		m.DedupKey = &key
	}
	return m
}

func asMessages(rows []models.InboxMessage) (msgs []*models.Message, ids []string) {
	for _, r := range rows {
		msgs = append(msgs, &models.Message{Role: "user", AuthorID: r.AuthorID, Content: r.Content, DedupKey: r.DedupKey})
		ids = append(ids, r.ID)
	}
	return msgs, ids
}

// TestInboxWaitsUntilConsumed: accepted messages wait in order (a second
// delivery of one stores nothing), the turn state reads them in its one
// query, and Consume moves them into the chat and out of the inbox in one
// write.
func TestInboxWaitsUntilConsumed(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:c")
		for i, key := range []string{"k1", "k2", "k1", ""} {
			stored, err := st.Accept(ctx, waiting("console:c", fmt.Sprint("line ", i), key))
			if err != nil {
				t.Fatal(err)
			}
			if want := i != 2; stored != want {
				t.Errorf("accept %d (key %q): stored %v, want %v", i, key, stored, want)
			}
		}
		ts, err := st.TurnState(ctx, "console:c", "console:ada")
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Inbox) != 3 || ts.Inbox[0].Content != "line 0" || ts.Inbox[2].Content != "line 3" || ts.Chat.ID != chat.ID {
			t.Fatalf("turn state inbox: got %+v", ts.Inbox)
		}
		if ts.Inbox[0].DedupKey == nil || *ts.Inbox[0].DedupKey != "k1" || ts.Inbox[2].DedupKey != nil {
			t.Errorf("dedup keys not read back: %+v", ts.Inbox)
		}
		if ok, err := st.ReviseInbox(ctx, "k2", "ada", "line 1, edited"); err != nil || !ok {
			t.Errorf("revise a waiting message: %v %v", ok, err)
		}
		if ts, err = st.TurnState(ctx, "console:c", "console:ada"); err != nil || ts.Inbox[1].Content != "line 1, edited" {
			t.Fatalf("after the edit: %+v %v", ts.Inbox, err)
		}
		msgs, ids := asMessages(ts.Inbox)
		if err := st.Consume(ctx, chat.ID, ts.Chat.HeadID, msgs, ids); err != nil {
			t.Fatal(err)
		}
		left, err := st.Inbox(ctx, "console:c")
		if err != nil || len(left) != 0 {
			t.Errorf("after Consume the inbox holds %d messages (%v)", len(left), err)
		}
		got, _ := st.Chat(ctx, chat.ID)
		br, _ := st.LoadBranch(ctx, got.HeadID)
		if n := len(br.Uncovered); n != 4 || br.Uncovered[1].Content != "line 0" || br.Uncovered[3].Content != "line 3" {
			t.Errorf("branch after Consume: %d messages %+v", n, br.Uncovered)
		}
		// Consumed messages never come back: a second Consume of the same
		// rows at the new head is refused and stores nothing.
		if err := st.Consume(ctx, chat.ID, got.HeadID, []*models.Message{{Role: "user", Content: "again"}}, ids); !errors.Is(err, models.ErrStale) {
			t.Errorf("consuming gone rows: got %v, want ErrStale", err)
		}
		if again, _ := st.Chat(ctx, chat.ID); again.HeadID != got.HeadID {
			t.Errorf("a refused Consume moved the head")
		}
	})
}

// TestConcurrentConsumeStoresOnce: two turns (two processes whose lock
// failed them) consume the same waiting messages at the same head: one
// stores them, the other is refused, and each message is in the chat once.
func TestConcurrentConsumeStoresOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:c")
		for i := 0; i < 3; i++ {
			if _, err := st.Accept(ctx, waiting("console:c", fmt.Sprint("line ", i), "")); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := st.Inbox(ctx, "console:c")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				msgs, ids := asMessages(rows)
				errs[i] = st.Consume(ctx, chat.ID, chat.HeadID, msgs, ids)
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, models.ErrStale):
				t.Errorf("unexpected error: %v", err)
			}
		}
		var n int64
		st.DB().Model(&models.Message{}).Where("chat_id = ? AND role = ?", chat.ID, "user").Count(&n)
		if ok != 1 || n != 3 {
			t.Errorf("%d consumes succeeded and %d user messages stored, want 1 and 3", ok, n)
		}
	})
}

// TestUnansweredChannels lists the channels whose current chat ends on a
// user message, recent ones only.
func TestUnansweredChannels(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		answered := newChat(t, st, "console:answered")
		appendBeat(t, st, answered.ID, 1)
		open := newChat(t, st, "console:open")
		if err := st.Append(ctx, open.ID, open.HeadID, open.HeadID, []*models.Message{{Role: "user", AuthorID: "ada", AuthorName: "Ada", Content: "hello?"}}); err != nil {
			t.Fatal(err)
		}
		got, err := st.UnansweredChannels(ctx, "console", time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ChannelID != "console:open" || got[0].SpaceKind != "local" || got[0].SpaceExternal != "ada" || got[0].AuthorName != "Ada" {
			t.Errorf("got %+v, want only console:open", got)
		}
		if got, _ := st.UnansweredChannels(ctx, "console", time.Now().Add(time.Hour)); len(got) != 0 {
			t.Errorf("chats older than the window: got %+v", got)
		}
	})
}
