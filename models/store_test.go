package models_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"troupe/models"
	"troupe/models/testenv"
)

// eachStore runs fn on a fresh store of every backend.
func eachStore(t *testing.T, fn func(t *testing.T, st *models.Store)) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, testenv.OpenStore(t, b))
		})
	}
}

// newChat makes a space, channel and chat with a greeting.
func newChat(t *testing.T, st *models.Store, channel string) models.Chat {
	t.Helper()
	ctx := context.Background()
	if err := st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureChannel(ctx, models.Channel{ID: channel, Platform: "console", ExternalID: channel, SpaceID: "console:local:ada"}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Data: "{}"}); err != nil {
		t.Fatal(err)
	}
	chat, err := st.StartChat(ctx, channel, "maren", "console:local:ada", "test", &models.Message{Role: "assistant", Content: "greeting"})
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

// appendBeat stores a user message and a reply at the chat's head.
func appendBeat(t *testing.T, st *models.Store, chatID string, i int) (user, reply *models.Message) {
	t.Helper()
	ctx := context.Background()
	chat, err := st.Chat(ctx, chatID)
	if err != nil {
		t.Fatal(err)
	}
	user = &models.Message{Role: "user", Content: fmt.Sprintf("user %d", i)}
	reply = &models.Message{Role: "assistant", Content: fmt.Sprintf("reply %d", i)}
	if err := st.Append(ctx, chatID, chat.HeadID, chat.HeadID, []*models.Message{user}); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, chatID, user.ID, user.ID, []*models.Message{reply}); err != nil {
		t.Fatal(err)
	}
	return user, reply
}

func TestBranchWalkStopsAtActiveSummary(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:a")
		var replies []*models.Message
		var users []*models.Message
		for i := 0; i < 10; i++ {
			u, r := appendBeat(t, st, chat.ID, i)
			users = append(users, u)
			replies = append(replies, r)
		}
		chat, _ = st.Chat(ctx, chat.ID)
		br, err := st.LoadBranch(ctx, chat.HeadID)
		if err != nil {
			t.Fatal(err)
		}
		if br.Summary != nil || len(br.Uncovered) != 21 {
			t.Fatalf("before summary: summary %v, %d uncovered; want none, 21", br.Summary, len(br.Uncovered))
		}
		if br.Uncovered[0].Content != "greeting" || br.Uncovered[20].Content != "reply 9" {
			t.Errorf("branch out of order: %q … %q", br.Uncovered[0].Content, br.Uncovered[20].Content)
		}
		sum, err := st.InstallSummary(ctx, chat.ID, "", replies[3].ID, "S1", 4)
		if err != nil {
			t.Fatal(err)
		}
		br, _ = st.LoadBranch(ctx, chat.HeadID)
		if br.Summary == nil || br.Summary.ID != sum.ID || len(br.Uncovered) != 12 || br.Uncovered[0].Content != "user 4" {
			t.Fatalf("after summary: got %d uncovered starting %q", len(br.Uncovered), br.Uncovered[0].Content)
		}
		// The branch reads its summary in the same statement: every field.
		if got := *br.Summary; got.ChatID != chat.ID || got.CoversThroughID != replies[3].ID || got.Content != "S1" || got.Beats != 4 ||
			got.CreatedAt.Sub(sum.CreatedAt).Abs() > time.Millisecond { // PostgreSQL keeps microseconds
			t.Errorf("the branch's summary = %+v, want %+v", got, sum)
		}
		// A second summary must name the first as the one it replaces.
		if _, err := st.InstallSummary(ctx, chat.ID, "", replies[6].ID, "S2", 7); !errors.Is(err, models.ErrStale) {
			t.Errorf("install over a changed active summary: err = %v, want ErrStale", err)
		}
		sum2, err := st.InstallSummary(ctx, chat.ID, sum.ID, replies[6].ID, "S2", 7)
		if err != nil {
			t.Fatal(err)
		}
		br, _ = st.LoadBranch(ctx, chat.HeadID)
		if br.Summary.ID != sum2.ID || len(br.Uncovered) != 6 {
			t.Errorf("after second summary: active %s, %d uncovered; want %s, 6", br.Summary.ID, len(br.Uncovered), sum2.ID)
		}
		// A branch forked before the first summary's cut never sees it:
		// regenerate the reply to user 2.
		alt := &models.Message{Role: "assistant", Content: "reply 2 again"}
		if err := st.Append(ctx, chat.ID, chat.HeadID, users[2].ID, []*models.Message{alt}); err != nil {
			t.Fatal(err)
		}
		br, _ = st.LoadBranch(ctx, alt.ID)
		if br.Summary != nil || len(br.Uncovered) != 7 {
			t.Errorf("forked branch: summary %v, %d uncovered; want none, 7", br.Summary, len(br.Uncovered))
		}
		// The head moved off the summarized branch: installing there is stale.
		if _, err := st.InstallSummary(ctx, chat.ID, sum2.ID, replies[8].ID, "S3", 9); !errors.Is(err, models.ErrStale) {
			t.Errorf("install after fork: err = %v, want ErrStale", err)
		}
	})
}

func TestAppendGuardsHeadAndDuplicates(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:b")
		key := "console:b:42"
		m := &models.Message{Role: "user", Content: "hi", DedupKey: &key}
		if err := st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{m}); err != nil {
			t.Fatal(err)
		}
		if err := st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{{Role: "user", Content: "x"}}); !errors.Is(err, models.ErrStale) {
			t.Errorf("append at an old head: err = %v, want ErrStale", err)
		}
		dup := &models.Message{Role: "user", Content: "hi", DedupKey: &key}
		if err := st.Append(ctx, chat.ID, m.ID, m.ID, []*models.Message{dup}); !errors.Is(err, models.ErrDuplicate) {
			t.Errorf("append a seen platform message: err = %v, want ErrDuplicate", err)
		}
		seen, err := st.SeenDedupKeys(ctx, []string{key, "console:b:43"})
		if err != nil || !seen[key] || seen["console:b:43"] {
			t.Errorf("seen = %v (%v)", seen, err)
		}
		got, _ := st.Chat(ctx, chat.ID)
		if got.HeadID != m.ID {
			t.Errorf("head = %s, want %s (a failed append must not move it)", got.HeadID, m.ID)
		}
	})
}

func TestConcurrentAppendsOneWins(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:c")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs <- st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{{Role: "user", Content: fmt.Sprint(i)}})
			}(i)
		}
		wg.Wait()
		close(errs)
		ok := 0
		for err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, models.ErrStale):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d appends at the same head succeeded, want 1", ok)
		}
	})
}

func TestAppendBatchIsAllOrNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:batch")
		k1, k2 := "console:batch:1", "console:batch:2"
		first := &models.Message{Role: "user", Content: "one", DedupKey: &k1}
		if err := st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, []*models.Message{first}); err != nil {
			t.Fatal(err)
		}
		// A batch whose second message was stored before writes nothing.
		batch := []*models.Message{{Role: "user", Content: "two", DedupKey: &k2}, {Role: "user", Content: "one again", DedupKey: &k1}}
		if err := st.Append(ctx, chat.ID, first.ID, first.ID, batch); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("err = %v, want ErrDuplicate", err)
		}
		if seen, _ := st.SeenDedupKeys(ctx, []string{k2}); seen[k2] {
			t.Error("the batch's new message was stored although the batch was refused")
		}
		// A batch of three chains under the parent and moves the head to its last.
		three := []*models.Message{
			{Role: "user", AuthorID: "u1", AuthorName: "Ada", Content: "a", DedupKey: &k2},
			{Role: "user", Content: "b"},
			{Role: "assistant", Content: "c", PromptTokens: 123, CompletionTokens: 45},
		}
		if err := st.Append(ctx, chat.ID, first.ID, first.ID, three); err != nil {
			t.Fatal(err)
		}
		got, _ := st.Chat(ctx, chat.ID)
		if got.HeadID != three[2].ID {
			t.Errorf("head = %s, want %s", got.HeadID, three[2].ID)
		}
		parents := []string{first.ID, three[0].ID, three[1].ID}
		for i, m := range three {
			stored, err := st.Message(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.ParentID != parents[i] || stored.ChatID != chat.ID || stored.Content != m.Content || stored.Role != m.Role {
				t.Errorf("message %d stored as %+v", i, stored)
			}
			if (stored.DedupKey == nil) != (m.DedupKey == nil) || stored.PromptTokens != m.PromptTokens || stored.CompletionTokens != m.CompletionTokens {
				t.Errorf("message %d: dedup %v tokens %d/%d, want %v %d/%d", i, stored.DedupKey, stored.PromptTokens, stored.CompletionTokens, m.DedupKey, m.PromptTokens, m.CompletionTokens)
			}
			if stored.AuthorID != m.AuthorID || stored.AuthorName != m.AuthorName || stored.CreatedAt.IsZero() {
				t.Errorf("message %d: author %q %q created %v", i, stored.AuthorID, stored.AuthorName, stored.CreatedAt)
			}
		}
		if err := st.Append(ctx, "01NOSUCHCHAT00000000000000", "", "", []*models.Message{{Role: "user", Content: "x"}}); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("append to a missing chat: err = %v, want ErrNotFound", err)
		}
	})
}

func TestTurnStateReadsEverythingInOneQuery(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		if _, err := st.TurnState(ctx, "console:none", "console:ada"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("missing channel: err = %v, want ErrNotFound", err)
		}
		if err := st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EnsureChannel(ctx, models.Channel{ID: "console:bare", Platform: "console", ExternalID: "bare", SpaceID: "console:local:ada"}); err != nil {
			t.Fatal(err)
		}
		ts, err := st.TurnState(ctx, "console:bare", "console:ada")
		if err != nil || ts.HasChat || ts.HasPersona || ts.Resident != "" || ts.Channel.ID != "console:bare" || ts.Channel.SpaceID != "console:local:ada" {
			t.Errorf("channel without a chat: %+v err=%v", ts, err)
		}
		want := newChat(t, st, "console:full")
		if err := st.SetPersona(ctx, models.Persona{UserKey: "console:ada", Name: "Captain Ada", Description: "a sailor"}); err != nil {
			t.Fatal(err)
		}
		if err := st.DB().Create(&models.ResidentSummary{CardID: "maren", SpaceID: "console:local:ada", Content: "She remembers the storm. [chat:x]"}).Error; err != nil {
			t.Fatal(err)
		}
		ts, err = st.TurnState(ctx, "console:full", "console:ada")
		if err != nil || !ts.HasChat || !ts.HasPersona {
			t.Fatalf("%+v err=%v", ts, err)
		}
		if ch := ts.Channel; ch.CurrentChatID != want.ID || ch.CardID != "maren" || ch.CreatedAt.IsZero() {
			t.Errorf("channel = %+v", ch)
		}
		if c := ts.Chat; c.ID != want.ID || c.HeadID != want.HeadID || c.CardID != "maren" || c.SpaceID != "console:local:ada" ||
			c.Name != "test" || c.ChannelID != "console:full" || c.ActiveAt.Sub(want.ActiveAt).Abs() > time.Millisecond {
			t.Errorf("chat = %+v, want %+v", c, want)
		}
		if ts.Persona.Name != "Captain Ada" || ts.Persona.Description != "a sailor" {
			t.Errorf("persona = %+v", ts.Persona)
		}
		if ts.Resident != "She remembers the storm. [chat:x]" {
			t.Errorf("resident = %q", ts.Resident)
		}
		// Another user has no persona and the same resident.
		other, err := st.TurnState(ctx, "console:full", "console:bo")
		if err != nil || other.HasPersona || other.Resident == "" {
			t.Errorf("other user: %+v err=%v", other, err)
		}
	})
}

func TestCreateChannelKeepsAnExistingOne(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		if err := st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}); err != nil {
			t.Fatal(err)
		}
		ch, err := st.CreateChannel(ctx, models.Channel{ID: "console:new", Platform: "console", ExternalID: "new", SpaceID: "console:local:ada"})
		if err != nil || ch.ID != "console:new" || ch.CreatedAt.IsZero() {
			t.Fatalf("created %+v, %v", ch, err)
		}
		if err := st.SetChannelCard(ctx, "console:new", "maren"); err != nil {
			t.Fatal(err)
		}
		again, err := st.CreateChannel(ctx, models.Channel{ID: "console:new", Platform: "console", ExternalID: "new", SpaceID: "console:local:ada"})
		if err != nil || again.CardID != "maren" {
			t.Errorf("second create returned %+v, %v; want the stored row with its card", again, err)
		}
	})
}
