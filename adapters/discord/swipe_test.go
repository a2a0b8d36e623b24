package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// TestSwipeThroughAlternativesAndBack: Ada's message gets a first reply;
// /swipe writes a second and the New button under it a third, every one
// kept; the ◀ button shows the second again and /swipe 1 the first. Her
// next message's prompt holds the first alternative and neither other,
// and only the reply shown last carries the buttons.
func TestSwipeThroughAlternativesAndBack(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{dsn: b.DSN})
			waitFor(t, 5*time.Second, func() bool { _, ok := h.discord.RegisteredCommand("", "swipe"); return ok }, "/swipe registered")
			takes := []string{"First take: the lamp is lit.", "Second take: the lamp gutters.", "Third take: the lamp is dark."}
			h.model.Script(openaitest.Answer{Text: takes[0]}, openaitest.Answer{Text: takes[1]}, openaitest.Answer{Text: takes[2]})
			h.say("What of the lamp?")
			first := h.waitTake(takes[0], bot.SwipeNew)

			h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "swipe"})
			second := h.waitTake(takes[1], bot.SwipePrev)
			h.discord.Click(second.ID, h.button(second, bot.SwipeNew), h.ada, member)
			third := h.waitTake(takes[2], bot.SwipePrev)
			if third.ID == second.ID || second.ID == first.ID {
				t.Fatalf("each alternative should come in a message of its own")
			}
			h.discord.Click(third.ID, h.button(third, bot.SwipePrev), h.ada, member)
			again := h.waitTakeAfter(takes[1], third.ID)
			h.discord.Command(discordtest.Slash{ChannelID: h.channel, User: h.ada, Permissions: member, Name: "swipe", Options: map[string]string{"n": "1"}})
			back := h.waitTakeAfter(takes[0], again.ID)
			if n := h.model.Count(); n != 3 {
				t.Errorf("model calls = %d, want 3: showing an alternative again writes nothing", n)
			}
			waitFor(t, 5*time.Second, func() bool {
				m, _ := h.discord.Message(back.ID)
				return strings.Contains(string(m.Components), bot.SwipeButton(bot.SwipeNext, ""))
			}, "the buttons under the first alternative shown again")
			waitFor(t, 5*time.Second, func() bool {
				m, _ := h.discord.Message(again.ID)
				return len(m.Components) == 0 || string(m.Components) == "[]"
			}, "the buttons taken off the reply before")

			h.say("And now?")
			waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 6, "And now?") }, "the reply to the next message")
			assertPromptHolds(t, h.model, "And now?", takes[0], takes[1:]...)
			assertAlternatives(t, h.store, "discord:"+h.channel, takes)
		})
	}
}

// waitTake waits for the character's message holding text with the swipe
// button op under it, and returns it.
func (h *harness) waitTake(text, op string) discordtest.Message {
	h.t.Helper()
	var got discordtest.Message
	waitFor(h.t, 15*time.Second, func() bool {
		for _, m := range h.characterMessages(h.channel) {
			if strings.Contains(m.Content, text) && strings.Contains(string(m.Components), `"sw:`) && h.hasButton(m, op) {
				got = m
				return true
			}
		}
		return false
	}, "%q with its buttons", text)
	return got
}

// waitTakeAfter waits for a character's message holding text posted after
// the message after.
func (h *harness) waitTakeAfter(text, after string) discordtest.Message {
	h.t.Helper()
	var got discordtest.Message
	waitFor(h.t, 15*time.Second, func() bool {
		seen := false
		for _, m := range h.characterMessages(h.channel) {
			if m.ID == after {
				seen = true
				continue
			}
			if seen && strings.Contains(m.Content, text) {
				got = m
				return true
			}
		}
		return false
	}, "%q shown again", text)
	return got
}

func (h *harness) hasButton(m discordtest.Message, op string) bool {
	return h.buttonOf(m, op) != ""
}

// button is the custom id of the enabled swipe button op under m.
func (h *harness) button(m discordtest.Message, op string) string {
	h.t.Helper()
	id := h.buttonOf(m, op)
	if id == "" {
		h.t.Fatalf("no %s button under %q: %s", op, m.Content, m.Components)
	}
	return id
}

func (h *harness) buttonOf(m discordtest.Message, op string) string {
	want := bot.SwipeButton(op, "")
	c := string(m.Components)
	for _, part := range strings.Split(c, "},{") {
		i := strings.Index(part, `"`+want)
		if i < 0 || strings.Contains(part, `"disabled":true`) {
			continue
		}
		id, _, _ := strings.Cut(part[i+1:], `"`)
		return id
	}
	return ""
}

// assertPromptHolds checks that the model's request answering the user
// line said holds want and none of gone.
func assertPromptHolds(t *testing.T, model *openaitest.Server, said, want string, gone ...string) {
	t.Helper()
	var prompt string
	for _, r := range model.Requests() {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[len(r.Messages)-1].Content, said) {
			var b strings.Builder
			for _, m := range r.Messages {
				b.WriteString(m.Content + "\n")
			}
			prompt = b.String()
		}
	}
	if prompt == "" {
		t.Fatalf("no model request answers %q", said)
	}
	if !strings.Contains(prompt, want) {
		t.Errorf("the prompt after swiping back lacks the alternative chosen, %q:\n%s", want, prompt)
	}
	for _, g := range gone {
		if strings.Contains(prompt, g) {
			t.Errorf("the prompt after swiping back holds an alternative not chosen, %q:\n%s", g, prompt)
		}
	}
}

// assertAlternatives checks that the channel's chat kept every alternative
// and that the chosen first one is on the branch.
func assertAlternatives(t *testing.T, st *models.Store, channel string, takes []string) {
	t.Helper()
	ctx := context.Background()
	ch, err := st.Channel(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := st.Chat(ctx, ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	br, err := st.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		t.Fatal(err)
	}
	var branch []string
	for _, m := range br.Uncovered {
		branch = append(branch, m.Content)
	}
	joined := strings.Join(branch, "\n")
	if !strings.Contains(joined, takes[0]) || strings.Contains(joined, takes[1]) || strings.Contains(joined, takes[2]) {
		t.Errorf("the branch holds %q, want the first alternative alone", branch)
	}
	for _, take := range takes {
		var n int64
		st.DB().Model(&models.Message{}).Where("chat_id = ? AND content = ?", chat.ID, take).Count(&n)
		if n != 1 {
			t.Errorf("%q stored %d times, want once (every alternative kept)", take, n)
		}
	}
}
