package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
	"troupe/recall"
)

// recordJobs runs what a turn leaves owed at once: the recorder when a
// batch waits (and compactions), so a test sees a deterministic record.
type recordJobs struct {
	mem  *memory.Service
	runs *int
}

func (j recordJobs) AfterTurn(ctx context.Context, t bot.TurnDone) error {
	if t.CompactionDue {
		_, err := j.mem.Compact(ctx, t.ChatID, t.Urgent)
		return err
	}
	return nil
}

func (j recordJobs) Record(ctx context.Context, chatID string, _ bool) error {
	*j.runs++
	_, err := j.mem.Record(ctx, chatID)
	if errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func (recordJobs) ChatEnded(context.Context, string) error { return nil }

func (recordJobs) MemoryChanged(context.Context, string, string) error { return nil }

type recordRig struct {
	st     *models.Store
	fake   *openaitest.Server
	scribe *memorytest.Scribe
	mem    *memory.Service
	p      *bot.Pipeline
	opt    bot.Options
	runs   int
}

// newRecordRig is a pipeline with the recorder on (batch turns) over the
// fake model and the scripted scribe.
func newRecordRig(t *testing.T, b testenv.Backend, batch int) *recordRig {
	t.Helper()
	return newRecordRigTB(t, b, batch)
}

func newRecordRigTB(t testing.TB, b testenv.Backend, batch int) *recordRig {
	t.Helper()
	return newRecordRigCard(t, b, batch, nil)
}

// newRecordRigCard is newRecordRig with the card changed by edit first.
func newRecordRigCard(t testing.TB, b testenv.Backend, batch int, edit func(*cards.Card)) *recordRig {
	t.Helper()
	mc := config.Default().Memory
	r := &recordRig{st: testenv.OpenStore(t, b), fake: openaitest.NewServer(t), scribe: &memorytest.Scribe{}}
	r.fake.SetResponder(r.scribe.Respond)
	client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	r.mem = memory.NewService(r.st, llm.Scribe{C: client, JSON: true}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
	card, err := cards.LoadCard(filepath.Join("..", "examples", "cards", "lantern-keeper.json"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&card)
	}
	lib, _ := cards.NewLibrary([]cards.Card{card}, "")
	r.opt = bot.Options{Store: r.st, Cards: lib, Model: client, Jobs: recordJobs{mem: r.mem, runs: &r.runs}, Memory: r.mem,
		Tokens: prompt.NewEstimator(), MemoryConfig: mc, Recorder: config.Recorder{Enabled: true, Batch: batch},
		Language: "en", ContextWindow: 128000, MaxReplyTokens: 256}
	r.p = bot.New(r.opt)
	return r
}

// withoutRecorder is the rig's pipeline with the recorder off.
func (r *recordRig) withoutRecorder(t testing.TB) *bot.Pipeline {
	t.Helper()
	opt := r.opt
	opt.Recorder.Enabled = false
	return bot.New(opt)
}

func (r *recordRig) say(t *testing.T, ch string, n int, author, text string) {
	t.Helper()
	r.sayTB(t, ch, n, author, text)
}

func (r *recordRig) sayTB(t testing.TB, ch string, n int, author, text string) {
	t.Helper()
	in := inbound(ch, n)
	in.AuthorID, in.AuthorName, in.Text = strings.ToLower(author), author, text
	if err := handle(context.Background(), r.p, in, &discardSink{}); err != nil {
		t.Fatalf("message %d: %v", n, err)
	}
}

// exec runs a command in channel ch as Ada and returns its notices.
func (r *recordRig) exec(t *testing.T, ch, name string) string {
	t.Helper()
	in := inbound(ch, 0)
	in.AuthorID, in.AuthorName = "ada", "Ada"
	sink := &discardSink{}
	if err := r.p.Exec(context.Background(), in, bot.Command{Name: name}, sink); err != nil {
		t.Fatalf("/%s: %v", name, err)
	}
	return strings.Join(sink.notices, "\n")
}

func (r *recordRig) chat(t *testing.T, ch string) models.Chat {
	t.Helper()
	c, err := r.st.Channel(context.Background(), "console:"+ch)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := r.st.Chat(context.Background(), c.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

func eventsOf(t *testing.T, st *models.Store, where string, args ...any) []models.Event {
	t.Helper()
	var evs []models.Event
	if err := st.DB().Where(where, args...).Order("seq, message_id, ord").Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestTurnStoresPlainEvents(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecordRig(t, b, 6)
			tests := []struct{ ch, text string }{
				{"en", `*I wave from the rocks.* "Maren, is the lamp lit?" ((brb in 5))`},
				{"zh", `我推开塔门。「有人吗？」“灯还亮着。”`},
			}
			want := map[string][]string{
				"en": {"action *I wave from the rocks.*", `line "Maren, is the lamp lit?"`},
				"zh": {"action 我推开塔门。", "line 「有人吗？」", "line “灯还亮着。”"},
			}
			for i, tt := range tests {
				r.say(t, tt.ch, i+1, "Ada", tt.text)
				chat := r.chat(t, tt.ch)
				var user models.Message
				r.st.DB().Where("chat_id = ? AND role = ?", chat.ID, "user").Take(&user)
				var got []string
				for _, e := range eventsOf(t, r.st, "message_id = ?", user.ID) {
					got = append(got, e.Kind+" "+e.Text)
					if e.Actor != "Ada" || e.Sealed {
						t.Errorf("%s: event %+v, want Ada's, unsealed", tt.ch, e)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want[tt.ch]) {
					t.Errorf("%s: events %q, want %q", tt.ch, got, want[tt.ch])
				}
				// The reply has its own events, by Maren.
				if evs := eventsOf(t, r.st, "message_id = ?", chat.HeadID); len(evs) == 0 || evs[0].Actor != "Maren" {
					t.Errorf("%s: reply events %+v, want Maren's", tt.ch, evs)
				}
				var pres []string
				r.st.DB().Model(&models.Presence{}).Where("message_id = ?", user.ID).Order("character_name").Pluck("character_name", &pres)
				if fmt.Sprint(pres) != "[Ada Maren]" {
					t.Errorf("%s: present %v, want [Ada Maren]", tt.ch, pres)
				}
			}
		})
	}
}

func TestRecorderBatch(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecordRig(t, b, 2)
			for i := 1; i <= 3; i++ {
				r.say(t, "b", i, "Ada", fmt.Sprintf(`*I climb step %d.* "Is the key here?"`, i))
			}
			// Two turns with a later user message wait after the third: one run.
			if n := r.scribe.Count("record"); n != 1 || r.runs != 1 {
				t.Fatalf("recorder called %d times (%d runs), want 1", n, r.runs)
			}
			var req openaitest.Request
			for _, q := range r.fake.Requests() {
				if memorytest.Kind(q) == "record" {
					req = q
				}
			}
			if req.ResponseFormat != "json_object" {
				t.Errorf("response_format %q, want json_object", req.ResponseFormat)
			}
			chat := r.chat(t, "b")
			sealed := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, true)
			open := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, false)
			if len(sealed) == 0 || len(open) == 0 || sealed[len(sealed)-1].Seq >= open[0].Seq {
				t.Fatalf("sealed %d, open %d: want the first two turns sealed and the last open", len(sealed), len(open))
			}
			if e := sealed[1]; e.Kind != "line" || e.Importance != 8 || e.Day != int(e.Seq) || e.Place != "the lighthouse" {
				t.Errorf("enriched event %+v, want the line about the key: importance 8, day = turn, the lighthouse", e)
			}
			var ps []models.Perception
			r.st.DB().Where("chat_id = ?", chat.ID).Find(&ps)
			if len(ps) != len(sealed) {
				t.Errorf("%d perceptions for %d sealed events, want one each for Maren", len(ps), len(sealed))
			}
			for _, p := range ps {
				if p.Character != "Maren" {
					t.Errorf("perception for %q: only the present cast perceives", p.Character)
				}
			}
			var rel models.Relationship
			if err := r.st.DB().Where("from_name = ? AND to_name = ?", "Maren", "Ada").Take(&rel).Error; err != nil || rel.ChatID != chat.ID {
				t.Errorf("relationship Maren→Ada: %+v, %v", rel, err)
			}
			// The next turn's prompt carries Maren's scene: her view of the
			// ledger and her own relationship to Ada, before the new message.
			r.say(t, "b", 4, "Ada", `"And now?"`)
			var turn openaitest.Request
			for _, q := range r.fake.Requests() {
				if memorytest.Kind(q) == "" {
					turn = q
				}
			}
			scene := turn.Messages[len(turn.Messages)-2]
			if scene.Role != "system" || !strings.Contains(scene.Content, "Where you are: the lighthouse") || !strings.Contains(scene.Content, "- Ada: met at the lighthouse") {
				t.Errorf("message before the new one: %s %q, want Maren's scene", scene.Role, scene.Content)
			}
			job, err := r.st.Job(context.Background(), memory.KindRecord, chat.ID)
			if err != nil || job.Outcome != "written" || job.Product == "" {
				t.Errorf("job record %+v, %v; want written with a product", job, err)
			}
			// /record records the turns that wait at once; /memory shows the
			// ledger and the counts.
			calls := r.scribe.Count("record")
			if out := r.exec(t, "b", "record"); !strings.Contains(out, "Recorded: sealed") || r.scribe.Count("record") != calls+1 {
				t.Errorf("/record said %q after %d calls, want a written record", out, r.scribe.Count("record")-calls)
			}
			out := r.exec(t, "b", "memory")
			// The ledger is written out for people, not the recorder's JSON.
			if !strings.Contains(out, "Ledger (may lag the story):") || !strings.Contains(out, "Scene: the lighthouse") || strings.Contains(out, `"place":`) || !strings.Contains(out, "waiting for the recorder") {
				t.Errorf("/memory said %q, want the ledger written out and the record counts", out)
			}
			// /forget leaves nothing of the chat's record.
			if _, err := r.mem.ForgetChat(context.Background(), chat.ID); err != nil {
				t.Fatal(err)
			}
			for _, m := range []any{&models.Event{}, &models.Perception{}, &models.Presence{}, &models.Thread{}, &models.Relationship{}, &models.Knowledge{}, &models.Entity{}} {
				var n int64
				if err := r.st.DB().Model(m).Where("chat_id = ?", chat.ID).Count(&n).Error; err != nil || n != 0 {
					t.Errorf("%T: %d rows of the forgotten chat (%v)", m, n, err)
				}
			}
		})
	}
}

// recordRigAtStep3 is a rig whose chat has one recorded batch (so story
// time has somewhere to go back from) and a third step waiting.
func recordRigAtStep3(t *testing.T, b testenv.Backend) (*recordRig, models.Chat) {
	t.Helper()
	r := newRecordRig(t, b, 100)
	for i := 1; i <= 2; i++ {
		r.say(t, "f", i, "Ada", fmt.Sprintf(`"Step %d."`, i))
	}
	chat := r.chat(t, "f")
	if res, err := r.mem.Record(context.Background(), chat.ID); err != nil || res.Outcome != memory.Written {
		t.Fatalf("first batch: %+v, %v", res, err)
	}
	r.say(t, "f", 3, "Ada", `"Step 3, the secret word is heliotrope."`)
	return r, chat
}

// eachAtStep3 runs body for each case on each backend, in parallel, with a
// rig at step 3 (recordRigAtStep3).
func eachAtStep3[C any](t *testing.T, cases map[string]C, body func(t *testing.T, r *recordRig, chat models.Chat, c C)) {
	for name, c := range cases {
		for _, b := range testenv.Backends(t) {
			t.Run(b.Name+"/"+name, func(t *testing.T) {
				t.Parallel()
				r, chat := recordRigAtStep3(t, b)
				body(t, r, chat, c)
			})
		}
	}
}

// breakRecorder makes the recorder answer with answer(request) until
// r.scribe.Break is reset.
func (r *recordRig) breakRecorder(answer func(req openaitest.Request) string) {
	r.scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) {
		if kind != "record" {
			return openaitest.Answer{}, false
		}
		return openaitest.Answer{Text: answer(r.fake.Requests()[len(r.fake.Requests())-1])}, true
	}
}

// An answer that is not the contract gets one repair; a second such answer
// writes nothing and leaves the work owed, with the reason in the job
// record.
func TestRecorderRepairsOnceThenOwes(t *testing.T) {
	bad := map[string]string{
		"bad JSON":            `{"events": [`,
		"no JSON":             `The gate is open now.`,
		"wrong section shape": `{"events": {"event": "x"}, "perceptions": 3}`,
		"no contract key":     `{"story": "Step 3", "mood": "tense"}`,
	}
	eachAtStep3(t, bad, func(t *testing.T, r *recordRig, chat models.Chat, answer string) {
		ctx := context.Background()
		before := r.scribe.Count("record")
		r.breakRecorder(func(openaitest.Request) string { return answer })
		var perceptions int64
		r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", chat.ID).Count(&perceptions)
		_, err := r.mem.Record(ctx, chat.ID)
		var rej *memory.RejectedError
		if !errors.As(err, &rej) {
			t.Fatalf("Record = %v, want a rejection", err)
		}
		if n := r.scribe.Count("record") - before; n != 2 {
			t.Errorf("%d recorder calls, want the answer and one repair", n)
		}
		if open := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, false); len(open) == 0 {
			t.Error("the batch was sealed after a rejection")
		}
		var after int64
		r.st.DB().Model(&models.Perception{}).Where("chat_id = ?", chat.ID).Count(&after)
		if after != perceptions {
			t.Errorf("perceptions %d → %d after a rejection: something was written", perceptions, after)
		}
		job, err := r.st.Job(ctx, memory.KindRecord, chat.ID)
		if err != nil || job.Outcome != models.OutcomeFailed || !strings.Contains(job.Reason, "not the recorder's JSON object") {
			t.Fatalf("job record %+v, %v; want failed, saying the answer is not the contract", job, err)
		}
		if strings.Contains(job.Reason, "heliotrope") || strings.Contains(job.Reason, "Step") {
			t.Errorf("the reason quotes the story: %q", job.Reason)
		}
		// The work stays owed: a good answer records it.
		r.scribe.Break = nil
		if res, err := r.mem.Record(ctx, chat.ID); err != nil || res.Outcome != memory.Written {
			t.Errorf("after the rejection: %+v, %v; want written", res, err)
		}
	})
}

// An answer that is the contract but carries bad items is not repaired:
// each bad item is dropped with its reason, which the job record, /memory
// and `troupe memory show` keep, and the good items are installed with the
// batch sealed.
func TestRecorderDropsBadItemsAndInstallsTheRest(t *testing.T) {
	type badItem struct {
		section string
		item    func(ev memorytest.RecorderEvent) string
		reason  string
	}
	long := strings.Repeat("x", 501)
	// Each case is one bad item of a section; the answer also carries good
	// items (an event's importance, a relationship, the ledger).
	bad := map[string]badItem{
		"unknown id": {"events", func(memorytest.RecorderEvent) string { return `{"event": "01NOPE", "importance": 5}` },
			"events[1]: cites an event id that was not shown"},
		"player is no cast member": {"perceptions", func(ev memorytest.RecorderEvent) string {
			return fmt.Sprintf(`{"character": "Ada", "event": %q, "mode": "saw"}`, ev.ID)
		}, "perceptions[0]: character is not in the cast"},
		"told without via": {"perceptions", func(ev memorytest.RecorderEvent) string {
			return fmt.Sprintf(`{"character": "Maren", "event": %q, "mode": "told", "text": "She heard of it."}`, ev.ID)
		}, "perceptions[0]: told without a shown telling event"},
		"story time backwards": {"turns", func(ev memorytest.RecorderEvent) string {
			return fmt.Sprintf(`{"turn": %d, "story_time": {"day": 0, "minute": 0}}`, ev.Turn)
		}, "turns[0]: story time runs backwards"},
		"importance out of range": {"changes", func(ev memorytest.RecorderEvent) string {
			return fmt.Sprintf(`{"turn": %d, "actor": "Maren", "text": "The gate opens.", "importance": 11}`, ev.Turn)
		}, "changes[0]: importance 11 is not 1–10"},
		"text over the limit": {"threads", func(ev memorytest.RecorderEvent) string {
			return fmt.Sprintf(`{"op": "open", "kind": "mystery", "text": %q, "event": %q}`, long, ev.ID)
		}, "threads[0]: text empty or longer than 500 characters"},
	}
	eachAtStep3(t, bad, func(t *testing.T, r *recordRig, chat models.Chat, c badItem) {
		ctx := context.Background()
		before := r.scribe.Count("record")
		var good string
		r.breakRecorder(func(req openaitest.Request) string {
			evs := memorytest.RecorderEvents(req)
			last := evs[len(evs)-1]
			good = last.ID
			sections := map[string][]string{
				"events":        {fmt.Sprintf(`{"event": %q, "importance": 9}`, good)},
				"relationships": {fmt.Sprintf(`{"from": "Maren", "to": "Ada", "description": "a curious visitor", "event": %q}`, good)},
			}
			sections[c.section] = append(sections[c.section], c.item(last))
			var parts []string
			for k, items := range sections {
				parts = append(parts, fmt.Sprintf("%q: [%s]", k, strings.Join(items, ", ")))
			}
			return `{"ledger": {"place": "the lighthouse"}, ` + strings.Join(parts, ", ") + `}`
		})
		unsealed := len(eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, false))
		res, err := r.mem.Record(ctx, chat.ID)
		if err != nil || res.Outcome != memory.Written {
			t.Fatalf("Record = %+v, %v; want written with the bad item dropped", res, err)
		}
		if n := r.scribe.Count("record") - before; n != 1 {
			t.Errorf("%d recorder calls, want one: a bad item gets no repair", n)
		}
		if open := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, false); len(open) >= unsealed {
			t.Errorf("%d events unsealed before and %d after: the batch was not sealed", unsealed, len(open))
		}
		if evs := eventsOf(t, r.st, "chat_id = ? AND importance = ?", chat.ID, 9); len(evs) != 1 || !strings.HasSuffix(evs[0].ID, good) {
			t.Errorf("the good event enrichment was not installed: %+v (want the event ending %s)", evs, good)
		}
		var rels int64
		r.st.DB().Model(&models.Relationship{}).Where("chat_id = ? AND from_name = ?", chat.ID, "Maren").Count(&rels)
		if rels != 1 {
			t.Errorf("%d relationships from Maren, want the good one installed", rels)
		}
		job, err := r.st.Job(ctx, memory.KindRecord, chat.ID)
		if err != nil || job.Outcome != string(memory.Written) || !strings.Contains(job.Reason, "dropped 1 items: "+c.reason) {
			t.Fatalf("job record %+v, %v; want written, naming the dropped item %q", job, err, c.reason)
		}
		if strings.Contains(job.Reason, "heliotrope") || strings.Contains(job.Reason, "Step") {
			t.Errorf("the reason quotes the story: %q", job.Reason)
		}
		if mem := r.exec(t, "f", "memory"); !strings.Contains(mem, c.reason) {
			t.Errorf("/memory does not show the dropped item's reason %q:\n%s", c.reason, mem)
		}
		view, err := r.st.RecordView(ctx, chat.CardID, chat.SpaceID)
		if err != nil || len(view.Runs) != 1 || !strings.Contains(view.Runs[0].Reason, c.reason) {
			t.Errorf("memory show's recorder runs %+v, %v; want the dropped item's reason", view.Runs, err)
		}
	})
}

// Five players speaking in one scene cost one recorder call per batch, and
// the batch shows all five present.
func TestRecorderOneCallForAScene(t *testing.T) {
	b := testenv.Backends(t)[0]
	r := newRecordRig(t, b, 5)
	names := []string{"Ada", "Bram", "Cass", "Dov", "Esme"}
	for i := 0; i < 6; i++ {
		r.say(t, "scene", i+1, names[i%5], fmt.Sprintf(`"I am %s."`, names[i%5]))
	}
	if n := r.scribe.Count("record"); n != 1 {
		t.Fatalf("%d recorder calls for one batch of a five-player scene, want 1", n)
	}
	var req openaitest.Request
	for _, q := range r.fake.Requests() {
		if memorytest.Kind(q) == "record" {
			req = q
		}
	}
	if got := memorytest.RecorderPlayers(req); fmt.Sprint(got) != fmt.Sprint(names) {
		t.Errorf("players shown %v, want %v", got, names)
	}
}

// A lorebook entry known only to Tess never reaches Maren's prompt (her own
// entry does); once the recorder grants Maren knowledge of it, it does.
func TestRestrictedLoreAfterKnowledgeGrant(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			book, err := cards.ParseBook([]byte(`{"entries":[
{"keys":["compass"],"comment":"the buried compass","content":"SECRET: the compass lies under the old tree.","extensions":{"troupe":{"known_by":["Tess"]}}},
{"keys":["compass"],"comment":"compasses","content":"OPEN: a compass points north.","extensions":{"troupe":{"known_by":["Maren"]}}}]}`))
			if err != nil {
				t.Fatal(err)
			}
			r := newRecordRigCard(t, b, 100, func(c *cards.Card) { c.Book = book })
			prompt := func() string {
				var turn openaitest.Request
				for _, q := range r.fake.Requests() {
					if memorytest.Kind(q) == "" {
						turn = q
					}
				}
				var all strings.Builder
				for _, m := range turn.Messages {
					all.WriteString(m.Content + "\n")
				}
				return all.String()
			}
			r.say(t, "lore", 1, "Ada", `"Tess told me about the compass. Where is it?"`)
			if p := prompt(); !strings.Contains(p, "OPEN: a compass") || strings.Contains(p, "SECRET") {
				t.Fatalf("before any grant, Maren's prompt should hold her own entry only:\n%s", p)
			}
			r.say(t, "lore", 2, "Ada", `"The compass matters, Maren."`)
			r.scribe.Break = func(kind string, _ int) (openaitest.Answer, bool) {
				if kind != "record" {
					return openaitest.Answer{}, false
				}
				req := r.fake.Requests()[len(r.fake.Requests())-1]
				if !strings.Contains(req.Messages[1].Content, "- the buried compass (lore)") {
					t.Errorf("the restricted entry is not among the recorder's entities:\n%s", req.Messages[1].Content)
				}
				ev := memorytest.RecorderEvents(req)[0].ID
				return openaitest.Answer{Text: fmt.Sprintf(`{"knowledge":[{"character":"Maren","entity":"the buried compass","event":%q}]}`, ev)}, true
			}
			if out := r.exec(t, "lore", "record"); !strings.Contains(out, "Recorded") {
				t.Fatalf("/record: %s", out)
			}
			r.scribe.Break = nil
			r.say(t, "lore", 3, "Ada", `"So, the compass?"`)
			if p := prompt(); !strings.Contains(p, "SECRET: the compass lies under the old tree.") {
				t.Errorf("after the grant, Maren's prompt lacks the entry:\n%s", p)
			}
			// The knowledge edge tells Maren what the lore says, never where
			// a thing is in the ledger or who holds it: her scene is unchanged.
			var k []models.Knowledge
			r.st.DB().Where("character_name = ?", "Maren").Find(&k)
			if len(k) != 1 {
				t.Errorf("knowledge edges of Maren: %+v, want one", k)
			}
		})
	}
}

// The ledger's roster and "where" name the background characters (the
// contract's only place for them): the recorder installs those that are
// neither the cast member nor a player, introduced by the chat.
func TestRecorderInstallsBackgroundCharactersFromTheLedger(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r, chat := recordRigAtStep3(t, b)
			r.breakRecorder(func(openaitest.Request) string {
				return `{"ledger": {"roster": ["the ferryman", "Maren", "ada"], "where": {"the harbour master": "the pier"}}}`
			})
			if res, err := r.mem.Record(context.Background(), chat.ID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("Record = %+v, %v", res, err)
			}
			var cs []models.Character
			if err := r.st.DB().Where("space_id = ? AND kind = ?", chat.SpaceID, models.CharacterBackground).Order("name").Find(&cs).Error; err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, c.Name+"@"+c.ChatID)
			}
			want := []string{"the ferryman@" + chat.ID, "the harbour master@" + chat.ID}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("background characters %v, want %v", got, want)
			}
		})
	}
}

// A cast character's aliases come from its card: the nickname {{char}}
// becomes is stored as the character's alias, and the recall index gets its
// cue term, so "Mae" in a later message cues what Maren perceived.
func TestRecorderGivesCastCharactersTheirCardNicknames(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecordRigCard(t, b, 100, func(c *cards.Card) { c.Nickname = "Mae" })
			for i := 1; i <= 2; i++ {
				r.say(t, "f", i, "Ada", fmt.Sprintf(`"Step %d."`, i))
			}
			chat := r.chat(t, "f")
			if res, err := r.mem.Record(context.Background(), chat.ID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("Record = %+v, %v", res, err)
			}
			var c models.Character
			if err := r.st.DB().Where("space_id = ? AND kind = ?", chat.SpaceID, models.CharacterCast).Take(&c).Error; err != nil {
				t.Fatal(err)
			}
			if c.Name != "Maren" || c.Aliases != "Mae" {
				t.Errorf("cast character %q with aliases %q, want Maren with Mae", c.Name, c.Aliases)
			}
			var n int64
			if err := r.st.DB().Model(&models.RecallTerm{}).Where("character_name = ? AND term = ?", "Maren", recall.CueTerm("Mae")).
				Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Error("no recall term for the alias Mae among Maren's items")
			}
		})
	}
}

// An automatic reflection that is not due leaves the chat's newest turns to
// the recorder's own batch; /reflect records them first.
func TestReflectionNotDueLeavesTurnsToTheRecorder(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecordRig(t, b, 10)
			for i := 1; i <= 4; i++ {
				r.say(t, "rf", i, "Ada", fmt.Sprintf(`*I climb step %d.* "Is the key here?"`, i))
			}
			chat := r.chat(t, "rf")
			ctx := context.Background()
			res, err := r.mem.Reflect(ctx, chat.ID, false)
			if err != nil || res.Outcome != memory.Skipped {
				t.Fatalf("automatic reflection: %+v, %v; want skipped, not due", res, err)
			}
			if n := r.scribe.Count("record"); n != 0 {
				t.Fatalf("an automatic reflection that was not due called the recorder %d times", n)
			}
			if sealed := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, true); len(sealed) != 0 {
				t.Fatalf("%d events sealed by a reflection that was not due", len(sealed))
			}
			// The scripted scribe does not answer reflection's own request:
			// only what came before it matters here.
			_, _ = r.mem.Reflect(ctx, chat.ID, true)
			if n := r.scribe.Count("record"); n != 1 {
				t.Fatalf("/reflect called the recorder %d times, want once, for the three turns that wait", n)
			}
			if sealed := eventsOf(t, r.st, "chat_id = ? AND sealed = ?", chat.ID, true); len(sealed) == 0 {
				t.Fatal("/reflect did not record the turns that wait first")
			}
		})
	}
}
