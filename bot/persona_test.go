package bot_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// playersRig is a pipeline with a scene of Maren (nicknamed Weiß) and 苏砚
// in a Discord guild channel where several people play, and a fake model
// whose requests it keeps.
type playersRig struct {
	st    *models.Store
	p     *bot.Pipeline
	model *openaitest.Server
	n     int
}

func newPlayersRig(t *testing.T, dsn string) *playersRig {
	t.Helper()
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lib, err := cards.NewLibrary([]cards.Card{
		{ID: "lamp", Name: "Maren", Nickname: "Weiß", Description: "Maren keeps the lamp on Gull Rock.", FirstMes: "Mind the rocks."},
		{ID: "tea", Name: "苏砚", Description: "Su Yan pours tea at the Half-Cup.", FirstMes: "Sit."},
	}, "lamp")
	if err != nil {
		t.Fatal(err)
	}
	fake := openaitest.NewServer(t)
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Text: fmt.Sprintf("A reply (%d).", req.Seq)}
	})
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	r := &playersRig{st: st, model: fake, p: bot.New(bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(),
		MemoryConfig: config.Default().Memory, Scene: config.Scene{MaxCast: 8}, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256})}
	if err := r.p.BindCast(context.Background(), r.ref(), []string{"lamp", "tea"}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (*playersRig) ref() bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: "hall", SpaceKind: bot.SpaceGuild, SpaceID: "g1", Group: true}
}

// say sends text as the player id (display name name).
func (r *playersRig) say(t *testing.T, id, name, text string) {
	t.Helper()
	r.n++
	in := bot.Inbound{Channel: r.ref(), AuthorID: id, AuthorName: name, MessageID: fmt.Sprint(r.n), Text: text, Mentioned: true}
	if err := handle(context.Background(), r.p, in, &sceneSink{}); err != nil {
		t.Fatalf("%s says %q: %v", name, text, err)
	}
}

// exec runs a command line as the player id and returns its notices.
func (r *playersRig) exec(t *testing.T, id, name, line string) []string {
	t.Helper()
	cmd, ok := bot.ParseCommand(line)
	if !ok {
		t.Fatalf("%q is no command", line)
	}
	s := &sceneSink{}
	if err := r.p.Exec(context.Background(), bot.Inbound{Channel: r.ref(), AuthorID: id, AuthorName: name, Text: line}, cmd, s); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return s.notices
}

// TestPersonaRefusesTakenNames: in a scene channel, /persona refuses the
// name or nickname of a cast member and the persona or display name of
// another player who spoke there, whatever the case, width or spacing
// (Unicode case folding: WEISS is Weiß), and stores nothing; a free name is
// saved, and a player may set their own name again.
func TestPersonaRefusesTakenNames(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newPlayersRig(t, b.dsn)
			ctx := context.Background()
			if got := r.exec(t, "bob", "Bob", "/persona Brannoc | A ferry hand."); len(got) != 1 || got[0] != "Persona saved: Brannoc" {
				t.Fatalf("Bob's /persona Brannoc = %q, want it saved", got)
			}
			r.say(t, "bob", "Bob", "Maren, may I warm my hands?")
			tests := []struct{ line, taken string }{
				{"/persona Maren | The keeper of the lamp.", "character"},
				{"/persona   mAREN   ", "character"},
				{"/persona Ｍａｒｅｎ | full width", "character"},
				{"/persona WEISS | her nickname, folded", "character"},
				{"/persona 苏砚 | 茶馆老板", "character"},
				{"/persona brannoc | Bob's persona", "player"},
				{"/persona BOB | Bob's display name", "player"},
			}
			for _, tt := range tests {
				got := r.exec(t, "ada", "Ada", tt.line)
				if len(got) != 1 || !strings.Contains(got[0], "choose another name") || !strings.Contains(got[0], tt.taken) {
					t.Errorf("%s = %q, want a refusal naming a %s", tt.line, got, tt.taken)
				}
				if per, err := r.st.Persona(ctx, "discord:ada"); !errors.Is(err, models.ErrNotFound) {
					t.Errorf("after %s Ada's persona is %+v (err %v), want none stored", tt.line, per, err)
				}
			}
			if got := r.exec(t, "ada", "Ada", "/persona Adalind | A cartographer."); len(got) != 1 || got[0] != "Persona saved: Adalind" {
				t.Errorf("/persona Adalind = %q, want it saved", got)
			}
			if per, err := r.st.Persona(ctx, "discord:ada"); err != nil || per.Name != "Adalind" {
				t.Errorf("Ada's persona = %+v (err %v), want Adalind", per, err)
			}
			if got := r.exec(t, "bob", "Bob", "/persona brannoc | A ferry hand in gloves."); len(got) != 1 || got[0] != "Persona saved: brannoc" {
				t.Errorf("Bob setting his own name again = %q, want it saved", got)
			}
		})
	}
}

// TestGroupPromptKeepsOtherPersonasOutOfSystem: eight players with
// 2,000-character personas speak in turn. The prompt answering the first of
// them again holds her own persona in the system message (who the card
// talks to) and none of the others' there; a user-role players note holds
// the four who spoke last, each cut to the cap.
func TestGroupPromptKeepsOtherPersonasOutOfSystem(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newPlayersRig(t, b.dsn)
			brief := func(i int) string { return fmt.Sprintf("Player%d's sworn brief: ", i) }
			for i := range 8 {
				id := fmt.Sprintf("p%d", i)
				persona := strings.Repeat(brief(i)+"the card obeys me. ", 100)[:2000]
				if got := r.exec(t, id, id, fmt.Sprintf("/persona Player%d | %s", i, persona)); len(got) != 1 || !strings.HasPrefix(got[0], "Persona saved") {
					t.Fatalf("/persona Player%d = %q", i, got)
				}
				r.say(t, id, id, fmt.Sprintf("Maren, Player%d is here.", i))
			}
			r.say(t, "p0", "p0", "Maren, who is here tonight?")
			reqs := r.model.Requests()
			last := reqs[len(reqs)-1].Messages
			if !strings.Contains(last[len(last)-1].Content, "who is here tonight") {
				t.Fatalf("the last request does not answer Player0's question: %q", last[len(last)-1].Content)
			}
			var system, note string
			for _, m := range last {
				switch {
				case m.Role == "system":
					system += m.Content + "\n"
				case m.Role == "user" && strings.HasPrefix(m.Content, "[Players]"):
					note = m.Content
				}
			}
			if !strings.Contains(system, brief(0)) {
				t.Errorf("the system message lacks the persona of the player answered")
			}
			for i := 1; i < 8; i++ {
				if strings.Contains(system, brief(i)) {
					t.Errorf("a system message holds Player%d's persona (%d characters of system text)", i, len(system))
				}
				if in, want := strings.Contains(note, fmt.Sprintf("- Player%d (writing as p%d): %s", i, i, brief(i))), i >= 4; in != want {
					t.Errorf("Player%d in the players note: %v, want %v:\n%s", i, in, want, note)
				}
			}
			// Four players of at most 300 characters each, with their names.
			if n := len([]rune(note)); n == 0 || n > 400+4*(300+30) {
				t.Errorf("the players note has %d characters, want one within the cap", n)
			}
		})
	}
}

// TestPersonaFromElsewhereStaysApartFromCast: a persona named like a cast
// member but set before the member came (or in another channel) plays
// here as a player's name, marked, so that the player's lines are never
// present or recorded as the character's, and other players' prompts name
// it so too; a free name plays as it is.
func TestPersonaFromElsewhereStaysApartFromCast(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newPlayersRig(t, b.dsn)
			ctx := context.Background()
			for key, name := range map[string]string{"discord:ada": "maren", "discord:bob": "Brannoc"} {
				if err := r.st.SetPersona(ctx, models.Persona{UserKey: key, Name: name, Description: "The one called " + name + "."}); err != nil {
					t.Fatal(err)
				}
			}
			present := func() []string {
				ch, err := r.st.Channel(ctx, "discord:hall")
				if err != nil {
					t.Fatal(err)
				}
				chat, err := r.st.Chat(ctx, ch.CurrentChatID)
				if err != nil {
					t.Fatal(err)
				}
				// The head is the reply; its user message is its parent.
				m, err := r.st.Message(ctx, chat.HeadID)
				if err != nil {
					t.Fatal(err)
				}
				names, err := r.st.PresentAt(ctx, m.ParentID)
				if err != nil {
					t.Fatal(err)
				}
				return names
			}
			r.say(t, "ada", "Ada", "Maren, is the lamp lit?")
			if got := present(); !slices.Contains(got, "maren (player)") {
				t.Errorf("present at Ada's line: %q, want her as \"maren (player)\"", got)
			}
			reqs := r.model.Requests()
			if sys := reqs[len(reqs)-1].Messages[0].Content; !strings.Contains(sys, "roleplay with maren (player).") {
				t.Errorf("the system message does not call Ada \"maren (player)\":\n%s", sys)
			}
			r.say(t, "bob", "Bob", "Maren, may I come in?")
			if got := present(); !slices.Contains(got, "Brannoc") {
				t.Errorf("present at Bob's line: %q, want Brannoc as he named himself", got)
			}
			reqs = r.model.Requests()
			if got, want := messagesText(reqs[len(reqs)-1].Messages), "- maren (player) (writing as Ada): The one called maren."; !strings.Contains(got, want) {
				t.Errorf("Bob's prompt lacks %q:\n%s", want, got)
			}
		})
	}
}
