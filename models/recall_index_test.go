package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"troupe/belief"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/recall"
)

// recordAll installs the chat's owed batch with the given perceptions
// (event index in the batch → character → text) and the about of its
// first event.
func recordAll(t *testing.T, st *models.Store, chat models.Chat, about string, percs map[int]map[string]string) models.RecordBatch {
	t.Helper()
	ctx := context.Background()
	b, err := st.RecordBatch(ctx, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	inst := models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID}
	for i, e := range b.Events {
		inst.EventIDs = append(inst.EventIDs, e.ID)
		up := models.Event{ID: e.ID, Importance: 5, Day: 2, Minute: 600}
		if i == 0 {
			up.About = about
		}
		inst.Enrich = append(inst.Enrich, up)
		for char, text := range percs[i] {
			inst.Perceptions = append(inst.Perceptions, models.Perception{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID,
				Character: char, EventID: e.ID, Mode: "heard", Text: text, Importance: 5, Seq: e.Seq, Day: 2, Minute: 600})
		}
	}
	if err := st.InstallRecord(ctx, inst); err != nil {
		t.Fatal(err)
	}
	return b
}

func search(t *testing.T, st *models.Store, space, char, text string) []string {
	t.Helper()
	terms := append(recall.Keywords(text), recall.Cues(text)...)
	hits, err := st.RecallHits(context.Background(), models.RecallSearch{SpaceID: space, Character: char, Terms: terms, PerTerm: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		if !slices.Contains(ids, h.ID) {
			ids = append(ids, h.ID)
		}
	}
	return ids
}

func perceptionID(t *testing.T, st *models.Store, char, text string) string {
	t.Helper()
	var p models.Perception
	if err := st.DB().Where("character_name = ? AND text = ?", char, text).Take(&p).Error; err != nil {
		t.Fatalf("perception %q of %s: %v", text, char, err)
	}
	return p.ID
}

// The index is written with the record: words, CJK bigrams and name cues
// find a character's own perceptions, never another's; long names and
// words fit PostgreSQL; /forget takes the index with the rows.
func TestRecallIndexFindsOwnPerceptionsOnly(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:recall1")
		long := strings.Repeat("长", models.NameSize)
		longWord := strings.Repeat("x", 300)
		appendRecorded(t, st, chat, "I buried the compass under the old oak.", "*nods*",
			[]models.PlainEvent{{Kind: "action", Text: "I buried the compass under the old oak."}}, []models.PlainEvent{{Kind: "action", Text: "*nods*"}})
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		compass := "I buried the compass under the old oak. " + longWord
		recordAll(t, st, chat, "the old oak\n"+long, map[int]map[string]string{
			0: {"Maren": compass, "Tess": "Tess alone saw the silver key.", long: "我把罗盘埋在老槐树下了。"},
		})
		if got := search(t, st, chat.SpaceID, "Maren", "Where did I bury the compass?"); len(got) != 1 {
			t.Errorf("Maren's search for the compass found %v, want her one perception", got)
		}
		if got := search(t, st, chat.SpaceID, "Maren", "The silver key, where is it?"); len(got) != 0 {
			t.Errorf("Maren found %v: another character's perception", got)
		}
		if got := search(t, st, chat.SpaceID, "Tess", "The silver key, where is it?"); len(got) != 1 {
			t.Errorf("Tess did not find her own perception: %v", got)
		}
		// 罗盘 is two characters: its bigram finds the sentence; the long
		// name is fitted the same way when searched.
		if got := search(t, st, chat.SpaceID, long, "罗盘在哪儿？"); len(got) != 1 {
			t.Errorf("罗盘 found %v, want the Chinese perception", got)
		}
		// A name cue: the event is about the old oak.
		if got := search(t, st, chat.SpaceID, "Maren", "Is the old oak still standing"); len(got) != 1 {
			t.Errorf("the cue 'the old oak' found %v", got)
		}
		if got := search(t, st, chat.SpaceID, "Maren", longWord); len(got) != 1 {
			t.Errorf("a 300-letter word found %v", got)
		}
		id := perceptionID(t, st, "Maren", compass)
		items, err := st.RecallItems(ctx, models.RecallLoad{SpaceID: chat.SpaceID, Character: "Maren", ChatID: chat.ID, Perceptions: []string{id}})
		if err != nil || len(items.Items) != 1 || items.Items[0].Text != compass || items.Items[0].Mode != "heard" || items.Now != 2*recall.MinutesPerDay+600 {
			t.Fatalf("items = %+v, %v", items, err)
		}
		// Tess cannot load Maren's perception even by its id.
		if other, err := st.RecallItems(ctx, models.RecallLoad{SpaceID: chat.SpaceID, Character: "Tess", ChatID: chat.ID, Perceptions: []string{id}}); err != nil || len(other.Items) != 0 {
			t.Errorf("Tess loaded %+v (%v)", other.Items, err)
		}
		if err := st.NoteRecall(ctx, models.RecallDone{Perceptions: []string{id}, Keep: 2,
			Diagnostic: &models.RecallDiagnostic{ChatID: chat.ID, Character: long, Data: "{}"}}); err != nil {
			t.Fatal(err)
		}
		if err := st.FlushRecallCounts(ctx); err != nil {
			t.Fatal(err)
		}
		var p models.Perception
		st.DB().Where("id = ?", id).Take(&p)
		if p.RecallCount != 1 {
			t.Errorf("recall count %d, want 1", p.RecallCount)
		}
		if _, err := st.ForgetChat(ctx, chat.ID); err != nil {
			t.Fatal(err)
		}
		for _, m := range []any{&models.RecallTerm{}, &models.RecallDiagnostic{}} {
			var n int64
			if err := st.DB().Model(m).Count(&n).Error; err != nil || n != 0 {
				t.Errorf("%T: %d rows left after /forget (%v)", m, n, err)
			}
		}
	})
}

// Diagnostics keep the chat's last recall.diagnostics_turns turns.
func TestRecallDiagnosticsKeepTheLastTurns(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:recall-diag")
		for i := range 5 {
			d := &models.RecallDiagnostic{ChatID: chat.ID, MessageID: string(rune('a' + i)), Character: "Maren", Data: "{}"}
			if err := st.NoteRecall(ctx, models.RecallDone{Diagnostic: d, Keep: 3}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.RecallDiagnostics(ctx, chat.ID, "", 10)
		if err != nil || len(got) != 3 || got[0].MessageID != "e" || got[2].MessageID != "c" {
			t.Errorf("kept %+v (%v), want the last three, newest first", got, err)
		}
		one, err := st.RecallDiagnostics(ctx, chat.ID, "d", 10)
		if err != nil || len(one) != 1 {
			t.Errorf("--message d: %+v (%v)", one, err)
		}
	})
}

// A /regen sibling's perceptions are not this branch's memories; on
// another chat's turn they count.
func TestRecallItemsKeepToTheBranch(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:recall-branch")
		u1, r1a := appendRecorded(t, st, chat, "Tell me.", "The treasure is in the well.",
			[]models.PlainEvent{{Kind: "line", Text: "Tell me."}}, []models.PlainEvent{{Kind: "line", Text: "The treasure is in the well."}})
		// /regen: a sibling of the reply, which the next turn follows.
		r1b := &models.Message{Role: "assistant", AuthorName: "Maren", Content: "The treasure is in the attic."}
		rec := &models.TurnRecord{SpaceID: chat.SpaceID, Present: []string{"Maren"}, Actors: []string{"Maren"},
			Events: [][]models.PlainEvent{{{Kind: "line", Text: "The treasure is in the attic."}}}}
		if err := st.AppendTurn(ctx, chat.ID, r1a.ID, u1.ID, []*models.Message{r1b}, rec); err != nil {
			t.Fatal(err)
		}
		appendRecorded(t, st, chat, "Next.", "ok", []models.PlainEvent{{Kind: "line", Text: "Next."}}, nil)
		b := recordAll(t, st, chat, "", map[int]map[string]string{})
		// The recorder never reads the abandoned sibling; a perception of it
		// is written by hand here, as a stale record might hold one.
		var old models.Event
		if err := st.DB().Where("message_id = ?", r1a.ID).Take(&old).Error; err != nil {
			t.Fatal(err)
		}
		var onBranch models.Event
		if err := st.DB().Where("message_id = ?", r1b.ID).Take(&onBranch).Error; err != nil {
			t.Fatal(err)
		}
		ps := []models.Perception{
			{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID, Character: "Maren", EventID: old.ID, Mode: "heard", Text: "The treasure is in the well.", Seq: old.Seq},
			{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID, Character: "Maren", EventID: onBranch.ID, Mode: "heard", Text: "The treasure is in the attic.", Seq: onBranch.Seq},
		}
		if err := st.DB().Create(&ps).Error; err != nil {
			t.Fatal(err)
		}
		ids := []string{ps[0].ID, ps[1].ID}
		head, _ := st.Chat(ctx, chat.ID)
		got, err := st.RecallItems(ctx, models.RecallLoad{SpaceID: chat.SpaceID, Character: "Maren", ChatID: chat.ID, HeadID: head.HeadID, Perceptions: ids})
		if err != nil || len(got.Items) != 1 || got.Items[0].Text != "The treasure is in the attic." {
			t.Errorf("on the branch: %+v (%v), want only the attic", got.Items, err)
		}
		other, err := st.RecallItems(ctx, models.RecallLoad{SpaceID: chat.SpaceID, Character: "Maren", ChatID: "another-chat", HeadID: "x", Perceptions: ids})
		if err != nil || len(other.Items) != 2 {
			t.Errorf("from another chat: %d items (%v), want both (positive control)", len(other.Items), err)
		}
		_ = b
	})
}

// A belief is indexed when reflection writes it, folded perceptions bring
// it along, and deleting it deletes its terms.
func TestRecallIndexesBeliefs(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:recall-belief")
		appendRecorded(t, st, chat, "Tess lied about the key.", "Hm.",
			[]models.PlainEvent{{Kind: "line", Text: "Tess lied about the key."}}, []models.PlainEvent{{Kind: "line", Text: "Hm."}})
		appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
		recordAll(t, st, chat, "", map[int]map[string]string{0: {"Maren": "Tess lied about the key."}})
		pid := perceptionID(t, st, "Maren", "Tess lied about the key.")
		bid := models.NewID()
		b := belief.Belief{ID: bid, Text: "Tess cannot be trusted with keys.", Confidence: belief.Doubtful, About: []string{"Tess"},
			FormedTurn: 1, ChangedTurn: 1, Evidence: []belief.Evidence{{Perception: pid, Turn: 1, Stance: belief.Supports}}}
		err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, Character: "Maren",
			Seen: []string{pid}, Changes: belief.Changes{Created: []belief.Belief{b}, Folded: []belief.Fold{{Perception: pid, Belief: bid}}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := search(t, st, chat.SpaceID, "Maren", "Can I trust Tess?"); !slices.Contains(got, bid) {
			t.Errorf("the cue Tess found %v, want the belief %s", got, bid)
		}
		items, err := st.RecallItems(ctx, models.RecallLoad{SpaceID: chat.SpaceID, Character: "Maren", ChatID: chat.ID, Perceptions: []string{pid}})
		if err != nil || len(items.Items) != 2 || items.Items[1].Kind != recall.Belief || items.Items[1].Confidence != "doubtful" || items.Items[0].FoldedInto != bid {
			t.Errorf("a folded perception's load = %+v (%v), want it and its belief", items.Items, err)
		}
		if _, err := st.DeleteBelief(ctx, bid); err != nil {
			t.Fatal(err)
		}
		var n int64
		st.DB().Model(&models.RecallTerm{}).Where("item_id = ?", bid).Count(&n)
		if n != 0 {
			t.Errorf("%d terms of the deleted belief left", n)
		}
	})
}

// TestRecallSearchTakesAnyTermAndBoundsEachTerm: whatever characters a
// term holds (quotes, backslashes, commas and braces, which the statement's
// term list must carry intact), it finds its own entries; a common term
// gives only its PerTerm newest, newest first; a belief comes back as one.
func TestRecallSearchTakesAnyTermAndBoundsEachTerm(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		const space, char = "console:recall-terms", "Maren"
		odd := []string{`a"b`, `x\y`, `{c,d}`, `o'neil`, `@the "old" oak`, `NULL`, `罗盘`}
		var rows []models.RecallTerm
		want := map[string]string{}
		for i, term := range odd {
			id := models.NewID()
			want[term] = id
			rows = append(rows, models.RecallTerm{ItemID: id, Term: term, SpaceID: space, Character: char, Seq: int64(i + 1), Kind: models.RecallBelief})
		}
		var common []string
		for i := range 30 {
			id := models.NewID()
			common = append(common, id)
			rows = append(rows, models.RecallTerm{ItemID: id, Term: "lamp", SpaceID: space, Character: char, Seq: int64(100 + i), Kind: models.RecallPerception})
		}
		// Another character's entry of the same term is never found.
		rows = append(rows, models.RecallTerm{ItemID: models.NewID(), Term: "lamp", SpaceID: space, Character: "Tess", Seq: 1000, Kind: models.RecallPerception})
		if err := st.DB().Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
		terms := append([]string{"lamp", "nothing-here"}, odd...)
		hits, err := st.RecallHits(context.Background(), models.RecallSearch{SpaceID: space, Character: char, Terms: terms, PerTerm: 5})
		if err != nil {
			t.Fatal(err)
		}
		var lamps []string
		got := map[string]string{}
		for _, h := range hits {
			if h.Term == "lamp" {
				if h.Kind != recall.Perception {
					t.Errorf("lamp hit %s is a %s", h.ID, h.Kind)
				}
				lamps = append(lamps, h.ID)
				continue
			}
			if h.Kind != recall.Belief {
				t.Errorf("hit %q is a %s, want a belief", h.Term, h.Kind)
			}
			got[h.Term] = h.ID
		}
		newest := slices.Clone(common[25:])
		slices.Reverse(newest)
		if !slices.Equal(lamps, newest) {
			t.Errorf("lamp found %v, want the 5 newest, newest first: %v", lamps, newest)
		}
		for term, id := range want {
			if got[term] != id {
				t.Errorf("term %q found %q, want %q", term, got[term], id)
			}
		}
		if len(hits) != 5+len(odd) {
			t.Errorf("got %d hits, want %d", len(hits), 5+len(odd))
		}
	})
}

// A record install's index terms are written after its transaction. When
// writing them fails (here the install's context ends just before), the
// record stands, its perceptions stay marked as owed and unfound by a
// search, and the chat's next install writes them; /forget removes a mark
// left behind.
func TestRecordTermsOwedUntilWritten(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		chat := newChat(t, st, "console:owed")
		owed := func() int64 {
			t.Helper()
			var n int64
			if err := st.DB().Model(&models.RecallOwed{}).Where("chat_id = ?", chat.ID).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		// install records the owed batch with one perception of Maren's;
		// broken ends the install's context where the terms are written.
		install := func(text string, broken bool) {
			t.Helper()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if broken {
				models.SetPause(st, func(p string) {
					if p == "index owed" {
						cancel()
					}
				})
				defer models.SetPause(st, nil)
			}
			b, err := st.RecordBatch(ctx, chat.ID)
			if err != nil || len(b.Events) == 0 {
				t.Fatalf("batch: %d events, %v", len(b.Events), err)
			}
			inst := models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID}
			for _, e := range b.Events {
				inst.EventIDs = append(inst.EventIDs, e.ID)
			}
			inst.Perceptions = []models.Perception{{ID: models.NewID(), ChatID: chat.ID, SpaceID: chat.SpaceID, Character: "Maren",
				EventID: b.Events[0].ID, Mode: "heard", Text: text, Importance: 5, Seq: b.Events[0].Seq}}
			if err := st.InstallRecord(ctx, inst); err != nil {
				t.Fatalf("install: %v", err)
			}
		}
		turn := func(i int) {
			appendRecorded(t, st, chat, fmt.Sprintf("line %d", i), "ok", []models.PlainEvent{{Kind: "line", Text: fmt.Sprintf("line %d", i)}}, nil)
		}
		turn(1)
		turn(2)
		install("The compass lies under the pier.", true)
		if n := owed(); n != 1 {
			t.Fatalf("%d perceptions owed their terms after the failed write, want 1", n)
		}
		if got := search(t, st, chat.SpaceID, "Maren", "the compass"); len(got) != 0 {
			t.Errorf("found %v before its terms were written", got)
		}
		turn(3)
		install("The lantern hangs in the boathouse.", false)
		if n := owed(); n != 0 {
			t.Errorf("%d perceptions still owed after the next install", n)
		}
		for _, q := range []string{"the compass", "the lantern"} {
			if got := search(t, st, chat.SpaceID, "Maren", q); len(got) != 1 {
				t.Errorf("search %q found %v, want its perception", q, got)
			}
		}
		turn(4)
		install("The key is in the kettle.", true)
		if n := owed(); n != 1 {
			t.Fatalf("%d owed before the forget, want 1", n)
		}
		if _, err := st.ForgetChat(context.Background(), chat.ID); err != nil {
			t.Fatal(err)
		}
		if n := owed(); n != 0 {
			t.Errorf("%d owed marks left after /forget", n)
		}
	})
}

// On SQLite a read outside a transaction goes to a reader connection: it
// returns while a memory install holds the one writer in its transaction
// (with the writer as the only connection it waited until the install
// ended).
func TestSQLiteReadsDoNotWaitForTheWriter(t *testing.T) {
	st := testenv.OpenStore(t, testenv.Backends(t)[0])
	chat := newChat(t, st, "console:readers")
	appendRecorded(t, st, chat, "one", "ok", []models.PlainEvent{{Kind: "line", Text: "one"}}, nil)
	appendRecorded(t, st, chat, "two", "ok", []models.PlainEvent{{Kind: "line", Text: "two"}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	held, release := make(chan struct{}), make(chan struct{})
	models.SetPause(st, func(p string) {
		if p == "install record" {
			close(held)
			<-release
		}
	})
	defer models.SetPause(st, nil)
	b, err := st.RecordBatch(ctx, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- st.InstallRecord(ctx, models.RecordInstall{ChatID: chat.ID, SpaceID: chat.SpaceID, EventIDs: []string{b.Events[0].ID}})
	}()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the install never reached its pause")
	}
	// A SELECT, and a branch walk (a WITH that only reads).
	for name, read1 := range map[string]func() error{
		"chat":   func() error { _, err := st.Chat(ctx, chat.ID); return err },
		"branch": func() error { _, err := st.LoadBranch(ctx, chat.HeadID); return err },
	} {
		read := make(chan error, 1)
		go func() { read <- read1() }()
		select {
		case err := <-read:
			if err != nil {
				t.Errorf("%s read beside the install: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the %s read waited for the writer's transaction", name)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
