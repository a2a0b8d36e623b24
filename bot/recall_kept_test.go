package bot_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/models/testenv"
)

// keptStory tells Maren three things in one chat of channel ch (where
// she buried thing, and her mare's name), then starts a new chat there, so
// that what follows must recall them.
func keptStory(t *testing.T, r *recordRig, ch, thing, mare string) {
	t.Helper()
	r.say(t, ch, 1, "Ada", "I buried the "+thing+" under the old oak.")
	r.say(t, ch, 2, "Ada", "My grey mare is called "+mare+".")
	r.say(t, ch, 3, "Ada", "*I look at the sea for a while.*")
	r.exec(t, ch, "new")
}

// newRecallRig is newRecordRig (recorder batch batch) with recall on at
// its defaults.
func newRecallRig(t *testing.T, b testenv.Backend, batch int) *recordRig {
	t.Helper()
	r := newRecordRig(t, b, batch)
	r.opt.Recall = config.Default().Recall
	r.p = bot.New(r.opt)
	return r
}

// indexOfUser returns the index of the user message with text in msgs.
func indexOfUser(t *testing.T, msgs []openaitest.Message, text string) int {
	t.Helper()
	for i, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Content, text) {
			return i
		}
	}
	t.Fatalf("no user message %q in the prompt", text)
	return -1
}

// A turn's recall block is kept: the next turn sends it again, word for
// word, where it stood (before the message it was recalled for), so that
// prompt begins with the last one, and its items are not shown a second
// time. With recall.kept_chars 0 the same question shows the item again
// (the control). Past kept_chars the older blocks go together, and what
// they showed can be recalled anew.
func TestRecallBlocksAreKeptInPlace(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			keptStory(t, r, "kp", "brass compass", "Juniper")
			compass := "I buried the brass compass under the old oak."
			ask := "Where did I bury the brass compass?"
			r.say(t, "kp", 4, "Ada", ask)
			first := lastChatPrompt(t, r.fake)
			own := recallBlock(t, r.fake)
			if !strings.Contains(own, compass) {
				t.Fatalf("the first question's block lacks the compass:\n%s", own)
			}
			r.say(t, "kp", 5, "Ada", "Is the brass compass still under the oak?")
			next := lastChatPrompt(t, r.fake)
			at := indexOfUser(t, next, ask)
			// Everything before the first turn's block is sent as it was,
			// and the block stands alone in its place.
			for i := 0; i < at-1; i++ {
				if next[i] != first[i] {
					t.Fatalf("message %d changed between the turns:\n%+v\n%+v", i, first[i], next[i])
				}
			}
			kept := next[at-1]
			if kept.Role != "system" || !strings.Contains(kept.Content, compass) || !strings.HasPrefix(first[at-1].Content, kept.Content) {
				t.Fatalf("the kept block is not the first turn's block in its place:\n%q\nfirst turn's: %q", kept.Content, first[at-1].Content)
			}
			if block := recallBlock(t, r.fake); strings.Contains(block, compass) {
				t.Errorf("the compass is shown a second time:\n%s", block)
			}

			// The control: nothing kept, the same turns show it again.
			off := r.opt
			off.Recall.KeptChars = 0
			r.p = bot.New(off)
			// (Each part buries another thing: all are Maren's memories.)
			keptStory(t, r, "k0", "copper lantern", "Bramble")
			compass = "I buried the copper lantern under the old oak."
			r.say(t, "k0", 4, "Ada", "Where did I bury the copper lantern?")
			r.say(t, "k0", 5, "Ada", "Is the copper lantern still under the oak?")
			if block := recallBlock(t, r.fake); !strings.Contains(block, compass) {
				t.Errorf("kept_chars 0: the second question's block lacks the compass:\n%s", block)
			}
			if n := messagesWith(lastChatPrompt(t, r.fake), "system", compass); n != 1 {
				t.Errorf("kept_chars 0: %d recall blocks show the lantern, want 1", n)
			}

			// A bound that holds one block: the mare's block takes the
			// flute's place, and the flute can be recalled again.
			small := r.opt
			small.Recall.KeptChars = utf8.RuneCountInString(kept.Content) + 10
			r.p = bot.New(small)
			keptStory(t, r, "ks", "silver flute", "Thistle")
			compass = "I buried the silver flute under the old oak."
			r.say(t, "ks", 4, "Ada", "Where did I bury the silver flute?")
			r.say(t, "ks", 5, "Ada", "And how is my grey mare Thistle?")
			r.say(t, "ks", 6, "Ada", "Tell me again where the silver flute is.")
			prompt := lastChatPrompt(t, r.fake)
			if n := messagesWith(prompt, "system", compass); n != 1 {
				t.Errorf("past kept_chars: %d recall blocks show the flute, want 1 (recalled anew)", n)
			}
			if block := recallBlock(t, r.fake); !strings.Contains(block, compass) {
				t.Errorf("past kept_chars: the compass was not recalled anew:\n%s", block)
			}
			if messagesWith(prompt, "system", "called Thistle") != 1 {
				t.Errorf("past kept_chars: Thistle's block went too")
			}
		})
	}
}

// messagesWith counts the messages of a prompt in role that hold text.
func messagesWith(msgs []openaitest.Message, role, text string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role && strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}

// The scene is kept with the turn's block too: while the character's scene
// stays the same word for word it is sent where a prompt first showed it,
// so each prompt is the last one with the new turn added; a scene that
// changed (the recorder ran) is sent at the end instead, and the old one
// no more. Every prompt shows exactly one scene.
func TestAnUnchangedSceneStaysWhereItWasShown(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			// A batch the turns never reach: the recorder runs only when
			// the test says. The card does not name its player, so every
			// prompt has a scene, Ada a stranger in it, from the first turn.
			r := newRecordRigCard(t, b, 100, func(c *cards.Card) {
				for _, f := range []*string{&c.Description, &c.Scenario, &c.FirstMes} {
					*f = strings.ReplaceAll(*f, "{{user}}", "the castaway")
				}
			})
			r.opt.Recall = config.Default().Recall
			r.p = bot.New(r.opt)
			var prompts [][]openaitest.Message
			say := func(n int, text string) []openaitest.Message {
				t.Helper()
				r.say(t, "sc", n, "Ada", text)
				p := lastChatPrompt(t, r.fake)
				if got := messagesWith(p, "system", "[Now] The scene as you know it:"); got != 1 {
					t.Fatalf("turn %d: %d scenes in the prompt, want 1:\n%s", n, got, messagesText(p))
				}
				prompts = append(prompts, p)
				return p
			}
			startsWith := func(next, prev []openaitest.Message) bool {
				return len(next) > len(prev) && slices.Equal(next[:len(prev)], prev)
			}
			say(1, "I buried the brass compass under the old oak.")
			say(2, "My grey mare is called Juniper.")
			say(3, "*I look at the sea for a while.*")
			for i := 1; i < len(prompts); i++ {
				if !startsWith(prompts[i], prompts[i-1]) {
					t.Fatalf("turn %d's prompt does not start with turn %d's:\n%s\n---\n%s", i+1, i, messagesText(prompts[i-1]), messagesText(prompts[i]))
				}
			}

			if _, err := r.mem.Record(context.Background(), r.chat(t, "sc").ID); err != nil {
				t.Fatal(err)
			}
			p4 := say(4, "Where did I bury the compass?")
			if at := len(p4) - 2; !strings.HasPrefix(p4[at].Content, "[Now]") || !strings.Contains(p4[at].Content, "Time: day") {
				t.Fatalf("the changed scene is not just before the new message:\n%s", messagesText(p4))
			}
			p5 := say(5, "*I wait for the tide.*")
			if !startsWith(p5, p4) {
				t.Errorf("after the change the scene is not kept again:\n%s\n---\n%s", messagesText(p4), messagesText(p5))
			}
		})
	}
}
