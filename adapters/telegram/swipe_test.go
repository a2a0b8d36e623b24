package telegram

import (
	"context"
	"strings"
	"testing"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/models/testenv"
)

// TestSwipeThroughAlternativesAndBack: Alice's message gets a first reply;
// /swipe writes a second and the New button under it a third, every one
// kept; the ◀ button shows the second again and /swipe 1 the first. Her
// next message's prompt holds the first alternative and neither other,
// and only the reply shown last keeps the keyboard.
func TestSwipeThroughAlternativesAndBack(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessOn(t, b.DSN)
			h.start()
			takes := []string{"First take: the lamp is lit.", "Second take: the lamp gutters.", "Third take: the lamp is dark."}
			h.ai.Script(openaitest.Answer{Text: takes[0]}, openaitest.Answer{Text: takes[1]}, openaitest.Answer{Text: takes[2]})
			h.tg.SendText(alice, "What of the lamp?")
			first := h.waitTake(takes[0], 0, bot.SwipeNew)

			h.tg.SendText(alice, "/swipe")
			second := h.waitTake(takes[1], first.ID, bot.SwipePrev)
			h.tg.Press(alice, alice.ID, second.ID, h.button(second, bot.SwipeNew))
			third := h.waitTake(takes[2], second.ID, bot.SwipePrev)
			h.tg.Press(alice, alice.ID, third.ID, h.button(third, bot.SwipePrev))
			again := h.waitTake(takes[1], third.ID, bot.SwipeNext)
			h.tg.SendText(alice, "/swipe 1")
			back := h.waitTake(takes[0], again.ID, bot.SwipeNext)
			if h.buttonOf(back, bot.SwipePrev) != "" {
				t.Errorf("the first alternative offers a previous one: %+v", back.Buttons)
			}
			if n := len(h.ai.Requests()); n != 3 {
				t.Errorf("model calls = %d, want 3: showing an alternative again writes nothing", n)
			}
			waitFor(t, "the keyboard taken off the reply before", func() bool {
				for _, m := range h.tg.Messages(alice.ID) {
					if m.ID == again.ID {
						return m.Buttons == nil
					}
				}
				return false
			})

			h.tg.SendText(alice, "And now?")
			h.waitText(alice.ID, "And now?")
			assertPromptHolds(t, h.ai, "And now?", takes[0], takes[1:]...)
			assertAlternatives(t, h, takes)
		})
	}
}

// waitTake waits for a bot message after the message after holding text
// with the swipe button op on its keyboard, and returns it.
func (h *harness) waitTake(text string, after int, op string) telegramtest.Message {
	h.t.Helper()
	var got telegramtest.Message
	waitFor(h.t, "\""+text+"\" with its keyboard", func() bool {
		for _, m := range h.tg.Messages(alice.ID) {
			if m.ID > after && strings.Contains(m.Text, text) && h.buttonOf(m, op) != "" {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// button is the data of the swipe button op on m's keyboard.
func (h *harness) button(m telegramtest.Message, op string) string {
	h.t.Helper()
	d := h.buttonOf(m, op)
	if d == "" {
		h.t.Fatalf("no %s button under %q: %+v", op, m.Text, m.Buttons)
	}
	return d
}

func (h *harness) buttonOf(m telegramtest.Message, op string) string {
	for _, row := range m.Buttons {
		for _, b := range row {
			if strings.HasPrefix(b.Data, bot.SwipeButton(op, "")) {
				return b.Data
			}
		}
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

// assertAlternatives checks that Alice's chat kept every alternative and
// that the chosen first one is on the branch.
func assertAlternatives(t *testing.T, h *harness, takes []string) {
	t.Helper()
	ctx := context.Background()
	chat, err := h.store.Chat(ctx, h.currentChat(alice.ID))
	if err != nil {
		t.Fatal(err)
	}
	br, err := h.store.LoadBranch(ctx, chat.HeadID)
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
	stored := map[string]int{}
	for _, m := range h.messages(alice.ID) {
		stored[m.Content]++
	}
	for _, take := range takes {
		if stored[take] != 1 {
			t.Errorf("%q stored %d times, want once (every alternative kept)", take, stored[take])
		}
	}
}
