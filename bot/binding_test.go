package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
)

// bindRig drives a sceneRig's pipeline through Submit alone, as adapters do.
type bindRig struct {
	*sceneRig
	n int
}

// submit hands ev to the pipeline and waits until its work is done.
func (r *bindRig) submit(t *testing.T, ev bot.Event) (bot.Receipt, *sceneSink) {
	t.Helper()
	r.n++
	ev.In.MessageID = fmt.Sprint(r.n)
	ev.In.AuthorID, ev.In.AuthorName = "ada", "Ada"
	s := &sceneSink{}
	rc := r.p.Submit(context.Background(), ev, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rc.Wait(ctx); err != nil {
		t.Fatalf("event %+v: %v", ev, err)
	}
	return rc, s
}

func (r *bindRig) say(t *testing.T, ref bot.ChannelRef, text string, mentioned bool) (bot.Receipt, *sceneSink) {
	t.Helper()
	return r.submit(t, bot.Event{Kind: bot.EventMessage, In: bot.Inbound{Channel: ref, Text: text, Mentioned: mentioned}})
}

func (r *bindRig) command(t *testing.T, ref bot.ChannelRef, line string) *sceneSink {
	t.Helper()
	cmd, ok := bot.ParseCommand(line)
	if !ok {
		t.Fatalf("not a command: %q", line)
	}
	_, s := r.submit(t, bot.Event{Kind: bot.EventCommand, In: bot.Inbound{Channel: ref, Text: line, CanManage: true}, Command: cmd})
	return s
}

// answeredBy checks that the message was heard and answered by who.
func answeredBy(t *testing.T, what string, rc bot.Receipt, s *sceneSink, who string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if rc.Ignored() || len(s.lines) != 1 || !strings.Contains(s.lines[0], who+" speaks") {
		t.Errorf("%s: ignored=%v lines=%q notices=%q, want one reply by %s", what, rc.Ignored(), s.lines, s.notices, who)
	}
}

func guildRef(id, parent string) bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: id, SpaceKind: bot.SpaceGuild, SpaceID: "guild-1", Group: true, ParentID: parent}
}

// TestBindingDecisions follows the pipeline's decisions of which channels
// play, through Submit on both databases: an unbound guild channel ignores
// messages but answers /help; /card set acts on the very next message; a
// thread with no card of its own takes its parent's and keeps it when the
// parent changes; a mention-only group hears only messages addressed to
// the character.
func TestBindingDecisions(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := &bindRig{sceneRig: newSceneRig(t, b.dsn)}
			hall, thread := guildRef("hall", ""), guildRef("thread-1", "hall")

			// An unbound guild channel: messages are ignored, /help answered,
			// a command that needs a character refused.
			rc, s := r.say(t, hall, "is anyone here?", true)
			if !rc.Ignored() || len(s.lines) != 0 || len(s.notices) != 0 {
				t.Errorf("unbound guild channel: ignored=%v lines=%q notices=%q, want ignored in silence", rc.Ignored(), s.lines, s.notices)
			}
			if s := r.command(t, hall, "/help"); len(s.notices) != 1 || !strings.Contains(s.notices[0], "/card") {
				t.Errorf("/help in an unbound guild channel: %q", s.notices)
			}
			if s := r.command(t, hall, "/regen"); len(s.notices) != 1 || !strings.Contains(s.notices[0], "/card set") {
				t.Errorf("/regen in an unbound guild channel: %q, want the no-card notice", s.notices)
			}

			// /card set binds it, and the next message is heard at once
			// (positive control of the ignored one above).
			r.command(t, hall, "/card set lantern-keeper")
			rc, s = r.say(t, hall, "hello, keeper", false)
			answeredBy(t, "after /card set", rc, s, "Maren")

			// A thread of the hall takes the hall's card.
			rc, s = r.say(t, thread, "a word in the thread", false)
			answeredBy(t, "thread", rc, s, "Maren")
			ch, err := r.st.Channel(context.Background(), thread.Key())
			if err != nil || ch.CardID != "lantern-keeper" {
				t.Fatalf("thread channel = %+v, %v; want bound to lantern-keeper", ch, err)
			}

			// A new card in the hall: the hall's next message (cached a
			// moment ago) is already hers; the thread keeps its own.
			r.command(t, hall, "/card set tea-house")
			rc, s = r.say(t, hall, "who is pouring tea?", false)
			answeredBy(t, "hall after the second /card set", rc, s, "苏砚")
			rc, s = r.say(t, thread, "still here?", false)
			answeredBy(t, "thread after the hall changed", rc, s, "Maren")

			// A mention-only group: an unmentioned message is heard before
			// the setting (positive control), ignored after it, and a
			// mentioned one is still answered.
			group := bot.ChannelRef{Platform: bot.PlatformTelegram, ID: "-100", SpaceKind: bot.SpaceGroup, SpaceID: "-100", Group: true}
			r.command(t, group, "/card set tea-house")
			rc, s = r.say(t, group, "chatting among ourselves", false)
			answeredBy(t, "group before mention-only", rc, s, "苏砚")
			r.command(t, group, "/card mention on")
			r.mu.Lock()
			calls := len(r.prompts)
			r.mu.Unlock()
			rc, s = r.say(t, group, "chatting among ourselves again", false)
			if !rc.Ignored() || len(s.lines) != 0 || len(s.notices) != 0 {
				t.Errorf("mention-only group, unmentioned: ignored=%v lines=%q notices=%q, want ignored", rc.Ignored(), s.lines, s.notices)
			}
			r.mu.Lock()
			if len(r.prompts) != calls {
				t.Errorf("an ignored message reached the model (%d calls, want %d)", len(r.prompts), calls)
			}
			r.mu.Unlock()
			rc, s = r.say(t, group, "苏砚, one cup please", true)
			answeredBy(t, "mention-only group, mentioned", rc, s, "苏砚")
		})
	}
}

// chooserSink is a sceneSink that can offer the cards, as Telegram's does.
type chooserSink struct {
	sceneSink
	offered []string
}

func (s *chooserSink) ChooseCard(_ context.Context, list []cards.Card) error {
	for _, c := range list {
		s.offered = append(s.offered, c.ID)
	}
	return nil
}

// TestStartThroughSubmit runs /start as an event: without a card a sink
// that can choose gets the library, "/start NAME" binds and greets, a card
// button does the same, and in a group only a manager may choose.
func TestStartThroughSubmit(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newSceneRig(t, b.dsn)
			ctx := context.Background()
			dm := bot.ChannelRef{Platform: bot.PlatformTelegram, ID: "7", SpaceKind: bot.SpaceUser, SpaceID: "7"}
			run := func(ev bot.Event) *chooserSink {
				t.Helper()
				ev.In.AuthorID, ev.In.AuthorName = "7", "Ada"
				s := &chooserSink{}
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if err := r.p.Submit(ctx, ev, s).Wait(wctx); err != nil {
					t.Fatal(err)
				}
				return s
			}
			start := func(ref bot.ChannelRef, args string, manage bool) *chooserSink {
				return run(bot.Event{Kind: bot.EventCommand, In: bot.Inbound{Channel: ref, CanManage: manage}, Command: bot.Command{Name: "start", Args: args}})
			}
			if s := start(dm, "", true); strings.Join(s.offered, ",") != "lantern-keeper,tea-house" || len(s.lines) != 0 {
				t.Errorf("/start: offered %v, lines %q; want the two cards and nothing else", s.offered, s.lines)
			}
			tea, _ := r.p.Cards().Get("tea-house")
			if s := start(dm, "tea-house", true); len(s.lines) != 1 || !strings.Contains(s.lines[0], tea.Greeting("Ada")[:20]) {
				t.Errorf("/start tea-house: lines %q, want her greeting", s.lines)
			}
			if ch, err := r.st.Channel(ctx, dm.Key()); err != nil || ch.CardID != "tea-house" {
				t.Errorf("after /start tea-house the DM plays %q (%v)", ch.CardID, err)
			}
			group := bot.ChannelRef{Platform: bot.PlatformTelegram, ID: "-5", SpaceKind: bot.SpaceGroup, SpaceID: "-5", Group: true}
			press := func(manage bool) *chooserSink {
				return run(bot.Event{Kind: bot.EventButton, In: bot.Inbound{Channel: group, CanManage: manage}, Card: "tea-house"})
			}
			if s := press(false); len(s.lines) != 0 || len(s.notices) != 1 {
				t.Errorf("a non-manager's card press: lines %q notices %q, want one refusal", s.lines, s.notices)
			}
			if _, err := r.st.Channel(ctx, group.Key()); err == nil {
				if ch, _ := r.st.Channel(ctx, group.Key()); ch.CardID == "tea-house" {
					t.Error("a non-manager's press chose the card")
				}
			}
			if s := press(true); len(s.lines) != 1 || !strings.Contains(s.lines[0], tea.Greeting("Ada")[:20]) {
				t.Errorf("a manager's card press: lines %q notices %q, want her greeting", s.lines, s.notices)
			}
			if ch, err := r.st.Channel(ctx, group.Key()); err != nil || ch.CardID != "tea-house" {
				t.Errorf("after the press the group plays %q (%v)", ch.CardID, err)
			}
		})
	}
}
