package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// queueJobs hands the pipeline's owed work to the real job queue, which a
// real worker runs (as cmd/troupe's bridge does).
type queueJobs struct{ q *jobs.Queue }

func (j queueJobs) AfterTurn(ctx context.Context, t bot.TurnDone) error {
	if t.CompactionDue {
		return j.q.Compact(ctx, t.ChatID, t.Urgent)
	}
	return nil
}
func (j queueJobs) Record(ctx context.Context, chatID string, now bool) error {
	return j.q.Record(ctx, chatID, now)
}
func (j queueJobs) ChatEnded(ctx context.Context, chatID string) error {
	return j.q.RecapNow(ctx, chatID)
}
func (j queueJobs) MemoryChanged(ctx context.Context, cardID, spaceID string) error {
	return j.q.Consolidate(ctx, cardID, spaceID)
}

// viewRig is a scene of Maren and 苏砚 on the real pipeline, memory
// service, job queue and worker, with a faithful fake scribe (its
// summaries and recaps repeat every line they were given, so a leak
// shows) and a fake model that keeps each character's prompts.
type viewRig struct {
	*sceneRig
	queue  *jobs.Queue
	scribe *memorytest.Faithful
	mem    *memory.Service
	// record, when set, answers the recorder in place of the faithful
	// scribe's contract answer (it gets that answer to edit).
	record func(req openaitest.Request, answer string) string
	// reflect, when set, answers reflection requests in place of the
	// faithful scribe (it gets that answer to edit).
	reflect func(req openaitest.Request, answer string) string
}

// viewOpts turns the recorder (with its batch) and recall on, and with
// reflect automatic reflection after the recorder's runs.
type viewOpts struct {
	recorder bool
	batch    int
	reflect  *memory.ReflectConfig
	// period, when set, replaces the rig's compaction period of 3 beats.
	period int
	// noRecall leaves recall off with the recorder on; recall, when set,
	// changes recall's configuration.
	noRecall bool
	recall   func(*config.Recall)
}

func newViewRig(t *testing.T, b sharedBackend, o viewOpts) *viewRig {
	t.Helper()
	ctx := context.Background()
	var cs []cards.Card
	for _, f := range []string{"lantern-keeper", "tea-house"} {
		c, err := cards.LoadCard("../examples/cards/" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	st, err := models.Open(ctx, b.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &viewRig{sceneRig: &sceneRig{st: st}, scribe: &memorytest.Faithful{}}
	n := 0
	r.scribe.Next = func(req openaitest.Request) openaitest.Answer {
		r.mu.Lock()
		defer r.mu.Unlock()
		who := whoIs(req.Messages)
		r.prompts = append(r.prompts, scenePrompt{who: who, messages: req.Messages})
		n++
		return openaitest.Answer{Text: fmt.Sprintf("%s nods and answers the question (%d).", who, n)}
	}
	fake := openaitest.NewServer(t)
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		a := r.scribe.Respond(req)
		r.mu.Lock()
		edit, reflection := r.record, r.reflect
		r.mu.Unlock()
		if edit != nil && memorytest.Kind(req) == "record" {
			a.Text = edit(req, a.Text)
		}
		if reflection != nil && memorytest.IsReflection(req) {
			a.Text = reflection(req, a.Text)
		}
		return a
	})
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	mc := config.Default().Memory
	mc.Keep, mc.Period, mc.MinCutChars, mc.ManualMinCutChars = 2, 3, 1, 1
	if o.period > 0 {
		mc.Period = o.period
	}
	memCfg := memory.ConfigFrom(mc, "en")
	if o.reflect != nil {
		memCfg.Reflect = *o.reflect
	}
	r.mem = memory.NewService(st, llm.Scribe{C: client}, memCfg, slog.New(slog.DiscardHandler))
	rds, err := jobs.OpenRedis(ctx, b.redis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rds.Close() })
	r.queue = jobs.NewQueue(rds, nil)
	wctx, cancel := context.WithCancel(ctx)
	w := jobs.NewWorker(rds, r.queue, r.mem, st, jobs.WorkerOptions{PollInterval: 50 * time.Millisecond, SweepInterval: time.Hour, IdleRecap: time.Hour,
		Recorder: o.recorder, RecordBatch: o.batch, Reflect: o.reflect != nil}, nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	lib, _ := cards.NewLibrary(cs, "")
	opt := bot.Options{Store: st, Cards: lib, Model: client, Memory: r.mem, Jobs: queueJobs{r.queue}, Tokens: prompt.NewEstimator(),
		MemoryConfig: mc, Scene: config.Scene{MaxCast: 8}, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256}
	if o.recorder {
		// As in production: the recorder on, and recall on by default.
		opt.Recorder = config.Recorder{Enabled: true, Batch: o.batch}
		if !o.noRecall {
			opt.Recall = config.Default().Recall
		}
		if o.recall != nil {
			o.recall(&opt.Recall)
		}
	}
	r.p = bot.New(opt)
	if err := r.p.BindCast(ctx, r.ref(), []string{"lantern-keeper", "tea-house"}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *viewRig) drain(t *testing.T) {
	t.Helper()
	if err := r.queue.Drain(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// summaries counts the stored summaries of the channel's current chat.
func (r *viewRig) summaries(t *testing.T) []models.Summary {
	t.Helper()
	sums, err := r.st.ChatSummaries(context.Background(), sceneChat(t, r.sceneRig).ID)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// lastPrompt returns the text of the newest prompt of who among ps.
func lastPrompt(t *testing.T, ps []scenePrompt, who string) string {
	t.Helper()
	return messagesText(lastPromptOf(t, ps, who))
}

// lastPromptOf returns the messages of the newest prompt of who among ps.
func lastPromptOf(t *testing.T, ps []scenePrompt, who string) []openaitest.Message {
	t.Helper()
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].who == who {
			return ps[i].messages
		}
	}
	t.Fatalf("no prompt of %s among %v", who, whos(ps))
	return nil
}

const secret = "QUARTZ-HERON-7719"

// TestWhisperNeverReachesTheAbsent is the whisper test: Maren and 苏砚 in
// the cast; 苏砚 away; a secret told to Maren over several turns until a
// compaction runs; 苏砚 back. Her prompts then hold nothing of it — not in
// the transcript, not in her summary, and after /new not in her recap or
// resident summary — while Maren's do. The positive control runs the same
// story with 苏砚 never away: then her prompts do hold it.
//
// With the recorder on (batches recorded by the job as the story goes,
// recall on) the recorder's answers also carry the secret into the ledger
// (its threads and flags) and into Maren's relationship to Ada: 苏砚's
// scene block and recall still hold nothing of it, and she has no
// perception of the events told while she was away, while Maren does.
func TestWhisperNeverReachesTheAbsent(t *testing.T) {
	for _, mode := range []struct {
		away, recorder bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		// A fresh database for each story: one leaves rows another reads.
		for _, b := range sharedBackends(t) {
			away := mode.away
			name := b.name + "/away"
			if !away {
				name = b.name + "/control"
			}
			if mode.recorder {
				name += "+recorder"
			}
			t.Run(name, func(t *testing.T) {
				r := newViewRig(t, b, viewOpts{recorder: mode.recorder, batch: 2})
				if mode.recorder {
					r.record = secretIntoTheRecord()
				}
				say := r.sayer(t)
				say("Good evening, both of you.")
				say("@苏砚 how is the tea tonight?")
				if away {
					r.exec(t, "/cast away 苏砚")
				}
				for i := 0; len(r.summaries(t)) == 0; i++ {
					if i == 12 {
						t.Fatal("no compaction ran after 12 turns")
					}
					say(fmt.Sprintf("Maren, keep this safe: the password is %s (telling you %d).", secret, i))
					r.drain(t)
				}
				say("Maren, let us talk about the weather instead.")
				if away {
					r.exec(t, "/cast back 苏砚")
				}
				ps := say("@苏砚 what have you heard tonight?")
				b1 := lastPrompt(t, ps, "苏砚")
				ps = say("Maren, what do you remember?")
				a1 := lastPrompt(t, ps, "Maren")
				if !strings.Contains(a1, secret) {
					t.Errorf("Maren's prompt lacks the secret she was told:\n%s", a1)
				}
				if got := strings.Contains(b1, secret); got == away {
					t.Errorf("苏砚 (away: %v) has the secret in her prompt: %v, want %v:\n%s", away, got, !away, b1)
				}
				if mode.recorder {
					r.checkPerceptions(t, away)
					if !strings.Contains(b1, "你所在之处：") {
						t.Errorf("苏砚's prompt has no scene block with the recorder on:\n%s", b1)
					}
				}
				// Compaction cost: with nobody away, each compaction made one
				// scribe call; with 苏砚 away, her chain was carried without one.
				// The last turns may have enqueued a compaction: let it finish
				// (its call counted, its summaries installed) before counting.
				r.drain(t)
				sums := r.summaries(t)
				if calls := r.scribe.Count("summary"); !away && calls != countCuts(sums) {
					t.Errorf("%d summary calls for %d compactions in a scene nobody left", calls, countCuts(sums))
				}
				if away && len(sums) < 2*countCuts(sums) {
					t.Errorf("%d summaries for %d compactions with 苏砚 away, want a chain each", len(sums), countCuts(sums))
				}

				// The chat ends: recaps, consolidations.
				r.exec(t, "/new")
				r.drain(t)
				r.drain(t)
				recaps, err := r.st.ChatRecaps(context.Background(), sums[0].ChatID)
				if err != nil {
					t.Fatal(err)
				}
				if len(recaps) != 2 {
					t.Fatalf("%d recaps of the ended scene, want one per cast card", len(recaps))
				}
				for _, rc := range recaps {
					if want := rc.CardID == "lantern-keeper" || !away; strings.Contains(rc.Content, secret) != want {
						t.Errorf("recap of %s holds the secret: %v, want %v", rc.CardID, !want, want)
					}
				}
				ps = say("@苏砚 good morning.")
				b2 := lastPrompt(t, ps, "苏砚")
				ps = say("Maren, good morning.")
				a2 := lastPrompt(t, ps, "Maren")
				if !strings.Contains(a2, secret) {
					t.Errorf("Maren's prompt in the next chat lacks the secret (resident summary):\n%s", a2)
				}
				if got := strings.Contains(b2, secret); got == away {
					t.Errorf("苏砚 (away: %v) in the next chat has the secret: %v, want %v:\n%s", away, got, !away, b2)
				}

				// /forget of the ended scene leaves no row of either card for it.
				r.forget(t, sums[0].ChatID)
			})
		}
	}
}

// forget runs a confirmed /forget of chatID, drains the consolidations it
// owes, and checks that no row of any cast card mentions the chat.
func (r *viewRig) forget(t *testing.T, chatID string) {
	t.Helper()
	ctx := context.Background()
	s := &confirmSink{}
	in := r.in(0, "/forget "+chatID)
	if err := r.p.Exec(ctx, in, bot.Command{Name: "forget", Args: chatID}, s); err != nil {
		t.Fatal(err)
	}
	if s.token == "" {
		t.Fatalf("/forget asked no confirmation: %q", s.notices)
	}
	if err := r.p.Answer(ctx, in, s.token, true, s); err != nil {
		t.Fatal(err)
	}
	r.drain(t)
	db := r.st.DB()
	for _, table := range []string{"recaps", "manifest_entries", "summaries", "summary_members", "message_presences", "chat_casts", "messages"} {
		var n int64
		if err := db.Table(table).Where("chat_id = ?", chatID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("after /forget, %s holds %d rows of the chat", table, n)
		}
	}
	for _, card := range []string{"lantern-keeper", "tea-house"} {
		mem, err := r.st.LoadMemory(ctx, card, sceneChat(t, r.sceneRig).SpaceID)
		if err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"handbook": mem.Handbook, "resident": mem.Resident} {
			if strings.Contains(text, chatID) || strings.Contains(text, secret) {
				t.Errorf("after /forget, %s's %s still holds the chat:\n%s", card, what, text)
			}
		}
	}
}

// countCuts counts the compactions among sums: the distinct messages they
// cover through (one cut point per compaction, whatever the views).
func countCuts(sums []models.Summary) int {
	seen := map[string]bool{}
	for _, s := range sums {
		seen[s.CoversThroughID] = true
	}
	return len(seen)
}

// secretIntoTheRecord edits the recorder's contract answers so that, from
// the batch telling the secret on, the ledger carries it where only the
// scribe may read it (its threads and flags), and Maren's relationship to
// Ada names it.
func secretIntoTheRecord() func(req openaitest.Request, answer string) string {
	told := ""
	return func(req openaitest.Request, answer string) string {
		for _, e := range memorytest.RecorderEvents(req) {
			if told == "" && strings.Contains(e.Text, secret) {
				told = e.ID
			}
		}
		var a map[string]any
		if told == "" || json.Unmarshal([]byte(answer), &a) != nil {
			return answer
		}
		ledger, _ := a["ledger"].(map[string]any)
		if ledger == nil {
			ledger = map[string]any{"place": "the lighthouse"}
		}
		ledger["threads"] = []string{"Maren keeps the password " + secret}
		ledger["flags"] = map[string]string{"password": secret}
		a["ledger"] = ledger
		if ev := memorytest.RecorderEvents(req); len(ev) > 0 {
			a["relationships"] = []map[string]string{{"from": "Maren", "to": "Ada", "description": "trusted with the password " + secret, "event": ev[0].ID}}
		}
		out, _ := json.Marshal(a)
		return string(out)
	}
}

// checkPerceptions checks, once the recorder has run, that Maren perceived
// the telling of the secret (which proves the query sees perceptions) and
// that 苏砚 did exactly when she was not away; and that the presence rows of the telling
// name 苏砚 exactly when she was never away.
func (r *viewRig) checkPerceptions(t *testing.T, away bool) {
	t.Helper()
	chat := sceneChat(t, r.sceneRig)
	if _, err := r.mem.Record(context.Background(), chat.ID); err != nil {
		t.Fatal(err)
	}
	knows := func(who string) int64 {
		var n int64
		err := r.st.DB().Model(&models.Perception{}).Where("character_name = ? AND text LIKE ?", who, "%"+secret+"%").Count(&n).Error
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if knows("Maren") == 0 {
		t.Error("Maren has no perception of the secret she was told")
	}
	if away && knows("苏砚") > 0 {
		t.Error("苏砚 perceived the secret told while she was away")
	}
	if !away && knows("苏砚") == 0 {
		t.Error("苏砚 was present at the telling and has no perception of it: the recorder does not treat her as cast")
	}
	var told []string
	err := r.st.DB().Model(&models.Presence{}).Joins("JOIN messages m ON m.id = message_presences.message_id").
		Where("m.chat_id = ? AND m.content LIKE ?", chat.ID, "%"+secret+"%").Distinct().Pluck("message_presences.character_name", &told).Error
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(told, "Maren") {
		t.Errorf("present at the telling: %v, want Maren among them", told)
	}
	if got := slices.Contains(told, "苏砚"); got == away {
		t.Errorf("苏砚 (away: %v) present at the telling: %v, want %v", away, got, !away)
	}
}

// TestLedgerPlacesAMemberAway: once a recorder batch (run by the job) puts
// 苏砚 somewhere other than the scene's place, she perceives nothing of the
// next turns — no presence rows, nothing of them in her prompt — while
// Maren does; a later ledger bringing her back restores her presence. The
// positive control comes first: before the ledger moves her, the presence
// query sees her.
func TestLedgerPlacesAMemberAway(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newViewRig(t, b, viewOpts{recorder: true, batch: 2})
			var mu sync.Mutex
			ledger := `{"place": "the lighthouse"}`
			setLedger := func(l string) {
				mu.Lock()
				defer mu.Unlock()
				ledger = l
			}
			r.record = func(_ openaitest.Request, answer string) string {
				var a map[string]any
				if json.Unmarshal([]byte(answer), &a) != nil {
					return answer
				}
				mu.Lock()
				var l map[string]any
				_ = json.Unmarshal([]byte(ledger), &l)
				mu.Unlock()
				a["ledger"] = l
				out, _ := json.Marshal(a)
				return string(out)
			}
			ctx := context.Background()
			chat := sceneChat(t, r.sceneRig)
			present := func(text string) []string {
				t.Helper()
				var who []string
				err := r.st.DB().Model(&models.Presence{}).Joins("JOIN messages m ON m.id = message_presences.message_id").
					Where("m.chat_id = ? AND m.content = ? AND message_presences.perceived = ?", chat.ID, text, true).
					Order("message_presences.character_name").Pluck("message_presences.character_name", &who).Error
				if err != nil {
					t.Fatal(err)
				}
				return who
			}
			next := r.sayer(t)
			say := func(text string) []scenePrompt {
				ps := next(text)
				r.drain(t)
				return ps
			}
			const before, during = "Maren, the tide turns at dusk.", "Maren, the marker word is VERDIGRIS-4410."
			say("@苏砚 good evening.")
			say(before)
			if got := present(before); !slices.Contains(got, "苏砚") || !slices.Contains(got, "Maren") {
				t.Fatalf("present at %q: %v, want both cast members (positive control)", before, got)
			}
			// The recorder's next batch puts 苏砚 at her tea house.
			setLedger(`{"place": "the lighthouse", "where": {"苏砚": "the tea house"}}`)
			if _, err := r.mem.Record(ctx, chat.ID); err != nil {
				t.Fatal(err)
			}
			say(during)
			say("Maren, and the lamp?")
			if got := present(during); slices.Contains(got, "苏砚") || !slices.Contains(got, "Maren") {
				t.Errorf("present at %q with 苏砚 elsewhere: %v, want Maren without 苏砚", during, got)
			}
			// A later ledger brings her back.
			setLedger(`{"place": "the lighthouse", "where": {"苏砚": "the lighthouse"}}`)
			say("Maren, one more thing.")
			if _, err := r.mem.Record(ctx, chat.ID); err != nil {
				t.Fatal(err)
			}
			ps := say("@苏砚 what did you hear tonight?")
			b1 := lastPrompt(t, ps, "苏砚")
			if got := present("@苏砚 what did you hear tonight?"); !slices.Contains(got, "苏砚") {
				t.Errorf("present after the ledger brought 苏砚 back: %v, want her among them", got)
			}
			if !strings.Contains(b1, "the tide turns at dusk") {
				t.Errorf("苏砚's prompt lacks what she heard before she left:\n%s", b1)
			}
			if strings.Contains(b1, "VERDIGRIS") {
				t.Errorf("苏砚's prompt holds what was said while the ledger placed her elsewhere:\n%s", b1)
			}
			ps = say("Maren, what is the marker word?")
			if a1 := lastPrompt(t, ps, "Maren"); !strings.Contains(a1, "VERDIGRIS-4410") {
				t.Errorf("Maren's prompt lacks what she heard:\n%s", a1)
			}
		})
	}
}
