package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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
	"troupe/prompt"
)

// whisperSecret is what Ada whispers to Maren.
const whisperSecret = "the spare key hangs behind the ORRERY-5521 chart"

// whisperRig is a scene of Maren and 苏砚 in a group channel where Ada and
// Bob play, on the real pipeline and store, with a fake model that answers
// as whoever its system text describes, repeating the last line it was
// given (so a leaked whisper shows in the answer), or fails with a 500
// while fail is set.
type whisperRig struct {
	st      *models.Store
	p       *bot.Pipeline
	mem     *memory.Service
	mu      sync.Mutex
	fail    bool
	prompts []scenePrompt
	n       int
}

// newWhisperRig makes the rig; with record set, the recorder is on (run
// by Record, never by a job) and record answers its requests.
func newWhisperRig(t *testing.T, dsn string, record func(req openaitest.Request) string) *whisperRig {
	t.Helper()
	var cs []cards.Card
	for _, f := range []string{"lantern-keeper", "tea-house"} {
		c, err := cards.LoadCard("../examples/cards/" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &whisperRig{st: st}
	fake := openaitest.NewServer(t)
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		if record != nil && memorytest.Kind(req) == "record" {
			return openaitest.Answer{Text: record(req)}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		who := whoIs(req.Messages)
		r.prompts = append(r.prompts, scenePrompt{who: who, messages: req.Messages})
		if r.fail {
			return openaitest.Answer{Fault: openaitest.Fault500}
		}
		r.n++
		last := req.Messages[len(req.Messages)-1].Content
		return openaitest.Answer{Text: fmt.Sprintf("%s answers (%d) to: %s", who, r.n, last)}
	})
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	lib, _ := cards.NewLibrary(cs, "")
	opt := bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(),
		MemoryConfig: config.Default().Memory, Scene: config.Scene{MaxCast: 8}, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256}
	if record != nil {
		r.mem = memory.NewService(st, llm.Scribe{C: client}, memory.ConfigFrom(opt.MemoryConfig, "en"), slog.New(slog.DiscardHandler))
		opt.Memory, opt.Recorder = r.mem, config.Recorder{Enabled: true, Batch: 100}
	}
	r.p = bot.New(opt)
	if err := r.p.BindCast(context.Background(), r.ref(), []string{"lantern-keeper", "tea-house"}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *whisperRig) ref() bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: "tavern", SpaceKind: bot.SpaceGuild, SpaceID: "guild", Group: true}
}

// in is a message of Ada or Bob (neither may manage the channel).
func (r *whisperRig) in(who, text string, n int) bot.Inbound {
	return bot.Inbound{Channel: r.ref(), AuthorID: strings.ToLower(who), AuthorName: who, Text: text, MessageID: fmt.Sprint(n)}
}

func (r *whisperRig) setFail(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = on
}

func (r *whisperRig) since(from int) []scenePrompt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scenePrompt(nil), r.prompts[from:]...)
}

func (r *whisperRig) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.prompts)
}

// say sends who's message to the channel.
func (r *whisperRig) say(t *testing.T, who, text string, n int) (*whisperSink, []scenePrompt) {
	t.Helper()
	from := r.mark()
	s := &whisperSink{}
	if err := handle(context.Background(), r.p, r.in(who, text, n), s); err != nil {
		t.Fatalf("%s's %q: %v", who, text, err)
	}
	return s, r.since(from)
}

// exec runs who's command; s is the sink the platform gives it.
func (r *whisperRig) exec(t *testing.T, who, line string, s *whisperSink) []scenePrompt {
	t.Helper()
	cmd, ok := bot.ParseCommand(line)
	if !ok {
		t.Fatalf("%q is no command", line)
	}
	from := r.mark()
	if err := r.p.Exec(context.Background(), r.in(who, line, 0), cmd, s); err != nil {
		t.Fatalf("%s's %s: %v", who, line, err)
	}
	return r.since(from)
}

// whisperSink is what a platform gives a command: the character's text and
// troupe's notices go to the channel until Whisper, then to the author
// alone; a refusal always goes to the author alone. A /whisper's sink is
// private from the start (private set), as the adapters make it.
type whisperSink struct {
	mu      sync.Mutex
	private bool
	speaker string
	// public is what the channel saw; secret what the author alone saw.
	public, secret []string
}

var _ bot.Whispering = (*whisperSink)(nil)

func (s *whisperSink) Whisper(context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.private = true
}
func (s *whisperSink) Speak(_ context.Context, sp bot.Speaker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.speaker = sp.Name
}
func (*whisperSink) Typing(context.Context)               {}
func (*whisperSink) Update(context.Context, string) error { return nil }
func (s *whisperSink) write(text string, private bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if private || s.private {
		s.secret = append(s.secret, text)
	} else {
		s.public = append(s.public, text)
	}
	return nil
}
func (s *whisperSink) Finish(_ context.Context, text string) error {
	return s.write(s.speaker+"|"+text, false)
}
func (s *whisperSink) Notice(_ context.Context, text string) error {
	return s.write("notice|"+text, false)
}
func (s *whisperSink) Refuse(_ context.Context, text string) error {
	return s.write("refused|"+text, true)
}

// holding returns the prompts among ps whose text holds s.
func holding(ps []scenePrompt, s string) []string {
	var out []string
	for _, p := range ps {
		if strings.Contains(promptText(p), s) {
			out = append(out, p.who)
		}
	}
	return out
}

// TestWhisperRegenOnlyByItsWriter: Ada whispers to Maren in a group
// channel; Maren's answer is written (answered) or the model fails
// (failed). Bob's /regen is refused to him alone: no public message, no
// prompt holds the whisper, nothing is stored. Ada's own /regen (the
// control) writes the answer again for her alone, from a prompt that holds
// the whisper, and 苏砚 perceives none of it.
func TestWhisperRegenOnlyByItsWriter(t *testing.T) {
	for _, failed := range []bool{false, true} {
		// A fresh database for each story: one leaves rows another reads.
		for _, b := range sharedBackends(t) {
			name := b.name + "/answered"
			if failed {
				name = b.name + "/failed"
			}
			t.Run(name, func(t *testing.T) {
				r := newWhisperRig(t, b.dsn, nil)
				r.say(t, "Ada", "Good evening, both of you.", 1)
				r.say(t, "Bob", "Evening! Maren, is the lamp lit?", 2)

				r.setFail(failed)
				ws := &whisperSink{private: true}
				ps := r.exec(t, "Ada", "/whisper Maren "+whisperSecret, ws)
				r.setFail(false)
				if len(ps) != 1 || ps[0].who != "Maren" || len(holding(ps, whisperSecret)) != 1 {
					t.Fatalf("the whisper's prompt: prompts of %v", whos(ps))
				}
				if len(ws.public) != 0 || len(ws.secret) != 1 {
					t.Fatalf("the whisper's answer: public %q, private %q", ws.public, ws.secret)
				}
				if failed {
					if n := ws.secret[0]; !strings.HasPrefix(n, "notice|") || !strings.Contains(n, "your whisper") || !strings.Contains(n, "/regen yourself") {
						t.Errorf("the failed whisper's notice does not say how to retry privately: %q", n)
					}
				}
				head := sceneChatOf(t, r.st, r.ref()).HeadID

				bob := &whisperSink{}
				ps = r.exec(t, "Bob", "/regen", bob)
				if len(ps) != 0 {
					t.Errorf("Bob's /regen called the model for %v", whos(ps))
				}
				if len(bob.public) != 0 {
					t.Errorf("Bob's /regen wrote to the channel: %q", bob.public)
				}
				if len(bob.secret) != 1 || !strings.HasPrefix(bob.secret[0], "refused|") || strings.Contains(bob.secret[0], "ORRERY") {
					t.Errorf("Bob's /regen: refusals %q, want one short refusal", bob.secret)
				}
				if got := sceneChatOf(t, r.st, r.ref()).HeadID; got != head {
					t.Errorf("Bob's /regen moved the head from %s to %s", head, got)
				}

				// The control: Ada's own /regen answers her alone, from a
				// prompt holding the whisper.
				ada := &whisperSink{}
				ps = r.exec(t, "Ada", "/regen", ada)
				if len(ps) != 1 || ps[0].who != "Maren" || len(holding(ps, whisperSecret)) != 1 {
					t.Fatalf("Ada's /regen: prompts of %v, holding the whisper: %v", whos(ps), holding(ps, whisperSecret))
				}
				if len(ada.public) != 0 {
					t.Errorf("Ada's /regen wrote to the channel: %q", ada.public)
				}
				if len(ada.secret) != 1 || !strings.HasPrefix(ada.secret[0], "Maren|") || !strings.Contains(ada.secret[0], "ORRERY") {
					t.Fatalf("Ada's /regen: private %q, want Maren's answer holding the whisper", ada.secret)
				}
				answer := strings.TrimPrefix(ada.secret[0], "Maren|")

				// Neither the whisper nor its new answer reaches 苏砚, who
				// was in the scene all along.
				s, ps := r.say(t, "Bob", "@苏砚 what did you hear tonight?", 3)
				if len(ps) != 1 || ps[0].who != "苏砚" {
					t.Fatalf("after the whisper: prompts of %v; public %q private %q", whos(ps), s.public, s.secret)
				}
				if txt := promptText(ps[0]); strings.Contains(txt, "ORRERY") || strings.Contains(txt, answer) {
					t.Errorf("苏砚's prompt holds the whisper or its answer:\n%s", txt)
				}
				if len(s.secret) != 0 || len(s.public) != 1 || strings.Contains(s.public[0], "ORRERY") {
					t.Errorf("a public turn after the whisper: public %q, private %q", s.public, s.secret)
				}
			})
		}
	}
}

// TestWhisperMarkedInTheTargetsLaterPrompts: after Ada's whisper, Maren's
// next public prompt shows the line marked as whispered — by Ada, to
// Maren, unheard by the others — and never as a plain public line.
func TestWhisperMarkedInTheTargetsLaterPrompts(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newWhisperRig(t, b.dsn, nil)
			r.say(t, "Ada", "Good evening, both of you.", 1)
			r.exec(t, "Ada", "/whisper Maren "+whisperSecret, &whisperSink{private: true})
			_, ps := r.say(t, "Bob", "Maren, what is on your mind?", 2)
			if len(ps) != 1 || ps[0].who != "Maren" {
				t.Fatalf("Bob's line: prompts of %v", whos(ps))
			}
			txt := promptText(ps[0])
			marked := "user: Ada: " + whisperSecret + " [Whispered by Ada to Maren alone: nobody else present heard this line or Maren's answer to it]"
			if !strings.Contains(txt, marked) {
				t.Errorf("Maren's later public prompt lacks the whisper marked as whispered:\n%s", txt)
			}
			if strings.Contains(txt, "user: Ada: "+whisperSecret+"\n") {
				t.Errorf("Maren's later public prompt shows the whisper as a plain line:\n%s", txt)
			}
		})
	}
}

// TestWhisperToldNeedsAWitnessTellingTheListener: Ada whispers to Maren
// while Bob and 苏砚 are in the scene; later Bob speaks to 苏砚, 苏砚
// answers, and Maren speaks where 苏砚 hears. The recorder claims 苏砚 was
// told the whisper three ways: by Bob (who did not hear it: present in the
// scene, not perceiving), by her own line, and by Maren (who did). Only
// Maren's telling is installed; the other two are dropped with their
// reasons. The recorder is shown the whisper as perceived by Ada and Maren
// alone, from the stored presence.
func TestWhisperToldNeedsAWitnessTellingTheListener(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			var whisperShown []string
			record := func(req openaitest.Request) string {
				var w, byBob, bySelf, byMaren string
				for _, e := range memorytest.RecorderEvents(req) {
					switch {
					case strings.Contains(e.Text, "ORRERY") && e.Actor == "Ada":
						w, whisperShown = e.ID, e.Present
					case e.Actor == "Bob" && strings.Contains(e.Text, "what do you think"):
						byBob = e.ID
					case e.Actor == "苏砚" && bySelf == "":
						bySelf = e.ID
					case e.Actor == "Maren" && strings.Contains(e.Text, "tell us a story"):
						byMaren = e.ID
					}
				}
				if w == "" || byBob == "" || bySelf == "" || byMaren == "" {
					t.Errorf("the recorder's batch lacks an event of the story: whisper %q, Bob %q, 苏砚 %q, Maren %q", w, byBob, bySelf, byMaren)
					return `{}`
				}
				told := func(via, text string) map[string]string {
					return map[string]string{"character": "苏砚", "event": w, "mode": "told", "text": text, "via": via}
				}
				out, _ := json.Marshal(map[string]any{"perceptions": []map[string]string{
					told(byBob, "told-by-bob: the spare key is behind the chart"),
					told(bySelf, "told-by-herself: the spare key is behind the chart"),
					told(byMaren, "told-by-maren: the spare key is behind the chart"),
				}})
				return string(out)
			}
			r := newWhisperRig(t, b.dsn, record)
			r.say(t, "Ada", "Good evening, both of you.", 1)
			r.say(t, "Bob", "Evening! Maren, is the lamp lit?", 2)
			r.exec(t, "Ada", "/whisper Maren "+whisperSecret, &whisperSink{private: true})
			r.say(t, "Bob", "@苏砚 what do you think of the weather?", 3)
			r.say(t, "Ada", "Maren, tell us a story.", 4)
			r.say(t, "Bob", "And then?", 5)

			ctx := context.Background()
			chat := sceneChatOf(t, r.st, r.ref())
			res, err := r.mem.Record(ctx, chat.ID)
			if err != nil || res.Outcome != memory.Written {
				t.Fatalf("Record = %+v, %v; want written", res, err)
			}
			if got := strings.Join(whisperShown, ","); got != "Ada,Maren" {
				t.Errorf("the recorder was shown the whisper as perceived by %q, want Ada,Maren", got)
			}
			for _, why := range []string{"told by someone who did not witness the event told", "told by the listener itself"} {
				if !strings.Contains(res.Reason, why) {
					t.Errorf("Record's reason %q does not name the drop %q", res.Reason, why)
				}
			}
			var texts []string
			if err := r.st.DB().Model(&models.Perception{}).Where("chat_id = ? AND character_name = ? AND mode = ?", chat.ID, "苏砚", "told").
				Order("text").Pluck("text", &texts).Error; err != nil {
				t.Fatal(err)
			}
			if len(texts) != 1 || !strings.HasPrefix(texts[0], "told-by-maren:") {
				t.Errorf("苏砚's told perceptions = %q, want Maren's telling alone", texts)
			}
		})
	}
}

// sceneChatOf is the current chat of the channel ref.
func sceneChatOf(t *testing.T, st *models.Store, ref bot.ChannelRef) models.Chat {
	t.Helper()
	ch, err := st.Channel(context.Background(), ref.Key())
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Chat(context.Background(), ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
