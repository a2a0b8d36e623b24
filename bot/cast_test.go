package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
	"troupe/prompt"
)

// sceneSink records, in order, who spoke and what.
type sceneSink struct {
	mu      sync.Mutex
	speaker string
	lines   []string
	notices []string
}

func (s *sceneSink) Speak(_ context.Context, sp bot.Speaker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.speaker = sp.Name
}
func (*sceneSink) Typing(context.Context)               {}
func (*sceneSink) Update(context.Context, string) error { return nil }
func (s *sceneSink) Finish(_ context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, s.speaker+"|"+text)
	return nil
}
func (s *sceneSink) Notice(_ context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, text)
	return nil
}

// sceneRig is a pipeline whose library holds Maren and 苏砚, and a fake
// model that answers as whoever the system text describes and keeps the
// prompt each character got.
type sceneRig struct {
	st      *models.Store
	p       *bot.Pipeline
	mu      sync.Mutex
	prompts []scenePrompt
}

type scenePrompt struct {
	who      string
	messages []openaitest.Message
}

// whoIs tells the speaking character from its prompt's system text.
func whoIs(msgs []openaitest.Message) string {
	if len(msgs) == 0 {
		return "?"
	}
	switch sys := msgs[0].Content; {
	case strings.Contains(sys, "Gull Rock"):
		return "Maren"
	case strings.Contains(sys, "半盏茶馆"):
		return "苏砚"
	}
	return "?"
}

func newSceneRig(t *testing.T, dsn string) *sceneRig {
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
	r := &sceneRig{st: st}
	fake := openaitest.NewServer(t)
	n := 0
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		r.mu.Lock()
		defer r.mu.Unlock()
		who := whoIs(req.Messages)
		r.prompts = append(r.prompts, scenePrompt{who: who, messages: req.Messages})
		n++
		return openaitest.Answer{Text: fmt.Sprintf("%s speaks (%d)", who, n)}
	})
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	lib, _ := cards.NewLibrary(cs, "")
	r.p = bot.New(bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(),
		MemoryConfig: config.Default().Memory, Scene: config.Scene{MaxCast: 8}, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256})
	return r
}

// newCastRig is a scene rig whose channel plays Maren and 苏砚, in that
// order.
func newCastRig(t *testing.T, dsn string) *sceneRig {
	t.Helper()
	r := newSceneRig(t, dsn)
	if err := r.p.BindCast(context.Background(), r.ref(), []string{"lantern-keeper", "tea-house"}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *sceneRig) ref() bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformConsole, ID: "scene", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
}

func (r *sceneRig) in(n int, text string) bot.Inbound {
	return bot.Inbound{Channel: r.ref(), AuthorID: "ada", AuthorName: "Ada", MessageID: fmt.Sprint(n), Text: text, CanManage: true}
}

// say sends a message and returns what was written for it and the
// prompts the model received meanwhile.
func (r *sceneRig) say(t *testing.T, n int, text string) (*sceneSink, []scenePrompt) {
	t.Helper()
	r.mu.Lock()
	from := len(r.prompts)
	r.mu.Unlock()
	s := &sceneSink{}
	if err := handle(context.Background(), r.p, r.in(n, text), s); err != nil {
		t.Fatalf("message %q: %v", text, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return s, append([]scenePrompt(nil), r.prompts[from:]...)
}

// sayer returns a say for one story: each text goes as the next message,
// numbered from 1, and say returns the prompts the model received meanwhile.
func (r *sceneRig) sayer(t *testing.T) func(text string) []scenePrompt {
	n := 0
	return func(text string) []scenePrompt {
		n++
		_, ps := r.say(t, n, text)
		return ps
	}
}

func (r *sceneRig) exec(t *testing.T, line string) (*sceneSink, []scenePrompt) {
	t.Helper()
	cmd, ok := bot.ParseCommand(line)
	if !ok {
		t.Fatalf("%q is no command", line)
	}
	r.mu.Lock()
	from := len(r.prompts)
	r.mu.Unlock()
	s := &sceneSink{}
	if err := r.p.Exec(context.Background(), r.in(0, line), cmd, s); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return s, append([]scenePrompt(nil), r.prompts[from:]...)
}

// promptText joins a prompt's messages as role: content lines.
func promptText(p scenePrompt) string { return messagesText(p.messages) }

// messagesText is a prompt's messages as "role: content" lines.
func messagesText(msgs []openaitest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

// TestSceneTwoCardsOneChannel plays a scene of Maren and 苏砚 on both
// databases: mentions route, two mentions answer in order with the second
// seeing the first's line under her name, each prompt is its speaker's own,
// a whisper reaches only its target, and a member away misses what was said
// meanwhile (while one never away hears it: the positive control).
func TestSceneTwoCardsOneChannel(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newCastRig(t, b.dsn)
			ctx := context.Background()
			list, _ := r.exec(t, "/cast")
			if len(list.notices) != 1 || !strings.Contains(list.notices[0], "Maren (lantern-keeper)") || !strings.Contains(list.notices[0], "苏砚 (tea-house)") {
				t.Fatalf("/cast = %q", list.notices)
			}

			// Nobody named: who spoke last (苏砚's greeting came second).
			s, ps := r.say(t, 1, "Good evening, everyone.")
			if len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "苏砚|") || len(ps) != 1 || ps[0].who != "苏砚" {
				t.Fatalf("unaddressed: lines %q, prompts of %v", s.lines, whos(ps))
			}
			// A name routes to its card, by its own system text.
			s, ps = r.say(t, 2, "Maren, what do you think?")
			if len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "Maren|") || len(ps) != 1 || ps[0].who != "Maren" {
				t.Fatalf("addressed Maren: lines %q, prompts of %v", s.lines, whos(ps))
			}
			if txt := promptText(ps[0]); !strings.Contains(txt, "user: 苏砚: 苏砚 speaks") || strings.Contains(txt, "assistant: 苏砚 speaks") {
				t.Errorf("Maren's prompt must show 苏砚's line under her name, as a user message:\n%s", txt)
			}
			// Two mentions: two replies, in order; the second sees the first.
			s, ps = r.say(t, 3, "@苏砚 @Maren what do you both know?")
			if len(s.lines) != 2 || !strings.HasPrefix(s.lines[0], "苏砚|") || !strings.HasPrefix(s.lines[1], "Maren|") {
				t.Fatalf("two mentions: lines %q", s.lines)
			}
			first := strings.TrimPrefix(s.lines[0], "苏砚|")
			if len(ps) != 2 || !strings.Contains(promptText(ps[1]), "user: 苏砚: "+first) {
				t.Errorf("Maren's prompt lacks 苏砚's reply of the same beat under her name")
			}
			// Unaddressed now: the last speaker (Maren) answers.
			if s, _ = r.say(t, 4, "And then?"); len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "Maren|") {
				t.Errorf("after Maren spoke last: lines %q", s.lines)
			}

			// A whisper reaches Maren alone.
			s, ps = r.exec(t, "/whisper Maren the key is under the third stone")
			if len(s.lines) != 1 || len(ps) != 1 || ps[0].who != "Maren" || !strings.Contains(promptText(ps[0]), "the third stone") {
				t.Fatalf("whisper: lines %q, prompts %v", s.lines, whos(ps))
			}
			_, ps = r.say(t, 5, "苏砚, anything new?")
			if len(ps) != 1 || ps[0].who != "苏砚" {
				t.Fatalf("after the whisper: prompts of %v", whos(ps))
			}
			if strings.Contains(promptText(ps[0]), "third stone") {
				t.Errorf("苏砚 perceived a whisper to Maren:\n%s", promptText(ps[0]))
			}

			// Positive control: said while 苏砚 is present, she hears it.
			r.say(t, 6, "Maren, the boat is called Swallow.")
			if _, ps = r.say(t, 7, "@苏砚 your thoughts?"); len(ps) != 1 || !strings.Contains(promptText(ps[0]), "Swallow") {
				t.Fatalf("positive control: 苏砚's prompt lacks what was said in her presence")
			}
			// 苏砚 away: what is said meanwhile never reaches her prompt.
			if s, _ = r.exec(t, "/cast away 苏砚"); len(s.notices) != 1 {
				t.Fatalf("/cast away: %q", s.notices)
			}
			if s, _ = r.say(t, 8, "@苏砚 are you there?"); len(s.lines) != 0 || len(s.notices) != 1 || !strings.Contains(s.notices[0], "苏砚") {
				t.Errorf("addressing an away member: lines %q, notices %q", s.lines, s.notices)
			}
			r.say(t, 9, "Maren, the vault code is 4471.")
			r.exec(t, "/cast back 苏砚")
			_, ps = r.say(t, 10, "@苏砚 welcome back")
			if len(ps) != 1 || ps[0].who != "苏砚" {
				t.Fatalf("after /cast back: prompts of %v", whos(ps))
			}
			if txt := promptText(ps[0]); strings.Contains(txt, "4471") || !strings.Contains(txt, "Swallow") {
				t.Errorf("苏砚's prompt after coming back must lack what was said while away and keep what she heard:\n%s", txt)
			}
			// Maren heard it all.
			if _, ps = r.say(t, 11, "@Maren what do you remember?"); len(ps) != 1 || !strings.Contains(promptText(ps[0]), "4471") || !strings.Contains(promptText(ps[0]), "third stone") {
				t.Errorf("Maren's prompt lacks what she perceived:\n%s", promptText(ps[len(ps)-1]))
			}
			// A nudge stores no line, and the named character speaks.
			chat := sceneChat(t, r)
			s, _ = r.say(t, 12, "@苏砚")
			if len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "苏砚|") {
				t.Fatalf("nudge: lines %q", s.lines)
			}
			head, err := r.st.Message(ctx, sceneChat(t, r).HeadID)
			if err != nil {
				t.Fatal(err)
			}
			if head.ParentID != chat.HeadID || head.Role != "assistant" {
				t.Errorf("a nudge stored a user line: the reply's parent is %s, want the old head %s", head.ParentID, chat.HeadID)
			}
		})
	}
}

func whos(ps []scenePrompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.who)
	}
	return out
}

func sceneChat(t *testing.T, r *sceneRig) models.Chat {
	t.Helper()
	ch, err := r.st.Channel(context.Background(), r.ref().Key())
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.st.Chat(context.Background(), ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSceneAddressedTravelsWithTheWaitingMessage: the member the platform
// says a message is addressed to (a reply to her message) answers it even
// when the turn that stores it is another message's: one that came while
// the first was stored in the inbox but not yet queued on its channel.
func TestSceneAddressedTravelsWithTheWaitingMessage(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newCastRig(t, b.dsn)
			ctx := context.Background()
			if s, _ := r.say(t, 1, "Maren, is the lamp lit?"); len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "Maren|") {
				t.Fatalf("addressed Maren: lines %q", s.lines)
			}
			reply := r.in(2, "Tell me more.")
			reply.Addressed = []string{"苏砚"}
			if err := r.p.AdmitOnly(ctx, reply); err != nil {
				t.Fatal(err)
			}
			// Unaddressed, alone, this one would go to Maren, who spoke last.
			s, ps := r.say(t, 3, "Go on.")
			if len(s.lines) != 1 || !strings.HasPrefix(s.lines[0], "苏砚|") || len(ps) != 1 || ps[0].who != "苏砚" {
				t.Fatalf("a waiting reply to 苏砚 taken by the next message's turn: lines %q, prompts of %v", s.lines, whos(ps))
			}
			if txt := promptText(ps[0]); !strings.Contains(txt, "Tell me more.") || !strings.Contains(txt, "Go on.") {
				t.Errorf("the turn did not store both waiting messages:\n%s", txt)
			}
		})
	}
}

// TestSceneCastCommands: the cast's bad input, each refused with its reason.
func TestSceneCastCommands(t *testing.T) {
	r := newSceneRig(t, "sqlite://"+t.TempDir()+"/cast.db")
	if err := r.p.Bind(context.Background(), r.ref(), "lantern-keeper"); err != nil {
		t.Fatal(err)
	}
	r.say(t, 1, "hello")
	for _, tc := range []struct{ line, want string }{
		{"/cast add nobody-at-all", "lantern-keeper"},
		{"/cast add tea-house", "苏砚"},
		{"/cast add tea-house", "already"},
		{"/cast remove Nobody", "Nobody"},
		{"/cast remove 苏砚", "苏砚"},
		{"/cast remove Maren", "last"},
		{"/whisper Nobody hi", "/whisper NAME"},
	} {
		s, _ := r.exec(t, tc.line)
		if len(s.notices) != 1 || !strings.Contains(s.notices[0], tc.want) {
			t.Errorf("%s: notices %q, want one containing %q", tc.line, s.notices, tc.want)
		}
	}
	in := r.in(0, "/cast add tea-house")
	in.Channel.Group, in.CanManage = true, false
	s := &sceneSink{}
	if err := r.p.Exec(context.Background(), in, bot.Command{Name: "cast", Args: "add tea-house"}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.notices) != 1 || strings.Contains(s.notices[0], "joins") {
		t.Errorf("a player who may not manage added a member: %q", s.notices)
	}
}
