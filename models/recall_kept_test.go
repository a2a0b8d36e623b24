package models_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"troupe/belief"
	"troupe/models"
)

// A kept recall block shows a character's memories in another chat's
// prompts, so it goes when what it shows is forgotten: forgetting the chat
// of a perception it shows, or deleting a belief it shows, deletes it in
// every chat; a block showing neither stays. A long character name is
// fitted on both databases.
func TestKeptRecallGoesWithWhatItShows(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		told := newChat(t, st, "console:kept-told")
		appendRecorded(t, st, told, "Tess lied about the key.", "Hm.",
			[]models.PlainEvent{{Kind: "line", Text: "Tess lied about the key."}}, []models.PlainEvent{{Kind: "line", Text: "Hm."}})
		appendRecorded(t, st, told, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, told, "", map[int]map[string]string{0: {"Maren": "Tess lied about the key."}})
		pid := perceptionID(t, st, "Maren", "Tess lied about the key.")

		other := newChat(t, st, "console:kept-other")
		appendRecorded(t, st, other, "The boat is blue.", "Aye.",
			[]models.PlainEvent{{Kind: "line", Text: "The boat is blue."}}, []models.PlainEvent{{Kind: "line", Text: "Aye."}})
		appendRecorded(t, st, other, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, other, "", map[int]map[string]string{0: {"Maren": "The boat is blue."}})
		bid := models.NewID()
		b := belief.Belief{ID: bid, Text: "The blue boat is Ada's.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: perceptionID(t, st, "Maren", "The boat is blue."), Turn: 1, Stance: belief.Supports}}}
		if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: other.ID, CardID: "maren", SpaceID: other.SpaceID, Character: "Maren",
			Changes: belief.Changes{Created: []belief.Belief{b}}}); err != nil {
			t.Fatal(err)
		}

		// A third chat's prompts show them: one block each, and one that
		// shows neither.
		live := newChat(t, st, "console:kept-live")
		long := "Maren" + strings.Repeat(", Keeper of the Light on Gull Rock", 10)
		var msgs []string
		for i, items := range [][]string{{pid}, {bid}, {}} {
			u, _ := appendBeat(t, st, live.ID, i)
			msgs = append(msgs, u.ID)
			if err := st.KeepRecall(ctx, models.RecallKept{MessageID: u.ID, Character: long, ChatID: live.ID, Text: "[Remembered] block"}, items); err != nil {
				t.Fatalf("keep block %d: %v", i, err)
			}
		}
		kept := func() int {
			t.Helper()
			got, err := st.KeptRecalls(ctx, live.ID, long, msgs)
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if n := kept(); n != 3 {
			t.Fatalf("%d kept blocks, want 3", n)
		}
		// One read gives each block with its text and its items.
		all, err := st.KeptRecalls(ctx, live.ID, long, msgs)
		if err != nil {
			t.Fatal(err)
		}
		wantItems := map[string]string{msgs[0]: pid, msgs[1]: bid, msgs[2]: ""}
		for _, k := range all {
			var ids []string
			for _, it := range k.Items {
				ids = append(ids, it.ItemID)
			}
			if k.Text != "[Remembered] block" || k.ChatID != live.ID || strings.Join(ids, ",") != wantItems[k.MessageID] {
				t.Errorf("kept block %s: text %q, chat %s, items %v; want its text, chat and items [%s]", k.MessageID, k.Text, k.ChatID, ids, wantItems[k.MessageID])
			}
		}
		if _, err := st.ForgetChat(ctx, told.ID); err != nil {
			t.Fatal(err)
		}
		if n := kept(); n != 2 {
			t.Errorf("after forgetting the perception's chat: %d kept blocks, want 2", n)
		}
		if _, err := st.DeleteBelief(ctx, bid); err != nil {
			t.Fatal(err)
		}
		got, err := st.KeptRecalls(ctx, live.ID, long, msgs)
		if err != nil || len(got) != 1 || got[0].MessageID != msgs[2] {
			t.Errorf("after deleting the belief: %+v (%v), want only the block that shows neither", got, err)
		}
		if _, err := st.ForgetChat(ctx, live.ID); err != nil {
			t.Fatal(err)
		}
		for _, m := range []any{&models.RecallKept{}, &models.RecallKeptItem{}} {
			var n int64
			if err := st.DB().Model(m).Count(&n).Error; err != nil || n != 0 {
				t.Errorf("%T: %d rows after forgetting the chat (%v)", m, n, err)
			}
		}
	})
}

// Rewriting a belief leaves its links exactly those it now cites: a link
// it keeps is kept, one whose stance changed is replaced, a new one is
// added and one it no longer cites goes.
func TestBeliefRewriteKeepsOnlyItsCurrentLinks(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:links")
		lines := []string{"The gate was open.", "Tess had the key.", "The lamp was lit.", "The dog did not bark."}
		for i := 0; i < len(lines); i += 2 {
			appendRecorded(t, st, chat, lines[i], lines[i+1],
				[]models.PlainEvent{{Kind: "line", Text: lines[i]}}, []models.PlainEvent{{Kind: "line", Text: lines[i+1]}})
			appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
			recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": lines[i]}, 1: {"Maren": lines[i+1]}})
		}
		p := make([]string, len(lines))
		for i, l := range lines {
			p[i] = perceptionID(t, st, "Maren", l)
		}
		install := func(b belief.Belief, create bool) {
			t.Helper()
			ch := belief.Changes{Updated: []belief.Belief{b}}
			if create {
				ch = belief.Changes{Created: []belief.Belief{b}}
			}
			if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren", Changes: ch}); err != nil {
				t.Fatal(err)
			}
		}
		b := belief.Belief{ID: models.NewID(), Text: "Tess opened the gate.", Confidence: belief.Likely, FormedTurn: 1, ChangedTurn: 1,
			Evidence: []belief.Evidence{{Perception: p[0], Turn: 1, Stance: belief.Supports}, {Perception: p[1], Turn: 1, Stance: belief.Supports},
				{Perception: p[2], Turn: 2, Stance: belief.Supports}}}
		install(b, true)
		b.Text, b.ChangedTurn = "Someone with a key opened the gate.", 3
		b.Evidence = []belief.Evidence{{Perception: p[0], Turn: 1, Stance: belief.Supports}, {Perception: p[1], Turn: 1, Stance: belief.Contradicts},
			{Perception: p[3], Turn: 3, Stance: belief.Supports}}
		install(b, false)
		views, err := st.Beliefs(ctx, chat.SpaceID, "Maren")
		if err != nil || len(views) != 1 {
			t.Fatalf("beliefs = %+v (%v)", views, err)
		}
		got := map[string]belief.Stance{}
		for _, e := range views[0].Evidence {
			got[e.Perception] = e.Stance
		}
		want := map[string]belief.Stance{p[0]: belief.Supports, p[1]: belief.Contradicts, p[3]: belief.Supports}
		if len(got) != len(want) {
			t.Fatalf("links = %v, want %v", got, want)
		}
		for id, s := range want {
			if got[id] != s {
				t.Errorf("link to %s: %q, want %q (all: %v)", id, got[id], s, got)
			}
		}
	})
}

// TestKeepRecallReplacesItsBlock: keeping a block again for the same
// message and character (a regenerated reply) replaces its text, scene
// and items, the items it still shows kept; a chat that is gone keeps
// nothing and says so.
func TestKeepRecallReplacesItsBlock(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:kept-again")
		u, _ := appendBeat(t, st, chat.ID, 0)
		read := func() models.RecallKept {
			t.Helper()
			got, err := st.KeptRecalls(ctx, chat.ID, "Maren", []string{u.ID})
			if err != nil || len(got) != 1 {
				t.Fatalf("kept: %+v, %v", got, err)
			}
			return got[0]
		}
		items := func(k models.RecallKept) string {
			var ids []string
			for _, it := range k.Items {
				if it.ChatID != chat.ID {
					t.Errorf("item %s filed under chat %q", it.ItemID, it.ChatID)
				}
				ids = append(ids, it.ItemID)
			}
			slices.Sort(ids)
			return strings.Join(ids, ",")
		}
		for _, step := range []struct {
			text, scene string
			items       []string
			want        string
		}{
			{"[Remembered] a and b", "", []string{"a", "b", "b"}, "a,b"},
			{"[Remembered] b and c", "At the pier.", []string{"c", "b"}, "b,c"},
			{"", "At the pier.", nil, ""},
		} {
			if err := st.KeepRecall(ctx, models.RecallKept{MessageID: u.ID, Character: "Maren", ChatID: chat.ID, Text: step.text, Scene: step.scene}, step.items); err != nil {
				t.Fatal(err)
			}
			k := read()
			if k.Text != step.text || k.Scene != step.scene || items(k) != step.want {
				t.Errorf("kept %q, scene %q, items [%s]; want %q, %q, [%s]", k.Text, k.Scene, items(k), step.text, step.scene, step.want)
			}
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		err := st.KeepRecall(ctx, models.RecallKept{MessageID: u.ID, Character: "Maren", ChatID: chat.ID, Text: "late"}, []string{"a"})
		if !errors.Is(err, models.ErrChatGone) {
			t.Fatalf("keeping a block of a forgotten chat: %v, want ErrChatGone", err)
		}
		var n int64
		for _, m := range []any{&models.RecallKept{}, &models.RecallKeptItem{}} {
			if err := st.DB().Model(m).Where("message_id = ?", u.ID).Count(&n).Error; err != nil || n != 0 {
				t.Errorf("%T: %d rows left after the chat was forgotten (%v)", m, n, err)
			}
		}
	})
}
