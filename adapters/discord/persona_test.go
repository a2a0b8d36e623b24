package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/models"
	"troupe/models/testenv"
)

// systemFor is the system prompt of the model's chat request that answers
// a user line containing marker, and the rest of that request's messages.
func (h *harness) systemFor(marker string) (system, rest string) {
	h.t.Helper()
	for _, req := range h.model.Requests() {
		sys, others, answers := "", "", false
		for _, m := range req.Messages {
			switch {
			case m.Role == "system" && sys == "":
				sys = m.Content
			default:
				others += m.Content + "\n"
			}
			if m.Role == "user" && strings.Contains(m.Content, marker) {
				answers = true
			}
		}
		if answers {
			return sys, others
		}
	}
	h.t.Fatalf("no model request answers %q", marker)
	return "", ""
}

// waitAnswered waits until the model was asked to answer a turn whose last
// message holds marker.
func (h *harness) waitAnswered(marker string) {
	h.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, req := range h.model.Requests() {
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" && strings.Contains(req.Messages[n-1].Content, marker) {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the model was never asked to answer %q", marker)
		}
	}
}

// TestScenePromptHoldsThePersonaOfEachPlayerPresent: two players with
// personas speak in one scene channel; the character's prompt holds the
// persona of the player it answers in its system message, and the other's,
// once they have spoken, in the players note outside it; never the persona
// of a third player who has one but never spoke there.
func TestScenePromptHoldsThePersonaOfEachPlayerPresent(t *testing.T) {
	t.Parallel()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{scene: true, dsn: b.DSN})
			carol := discordtest.User{ID: h.discord.NewID(), Username: "carol"}
			ada, adaNote := "[Adalind]\nA cartographer with ink-stained fingers.", "- Adalind (writing as Ada): A cartographer with ink-stained fingers."
			bob, bobNote := "[Brannoc]\nA ferry hand who never takes off his gloves.", "- Brannoc (writing as bob): A ferry hand who never takes off his gloves."
			carols := "Carys"
			for _, p := range []models.Persona{
				{UserKey: "discord:" + h.ada.ID, Name: "Adalind", Description: "A cartographer with ink-stained fingers."},
				{UserKey: "discord:" + h.bob.ID, Name: "Brannoc", Description: "A ferry hand who never takes off his gloves."},
				{UserKey: "discord:" + carol.ID, Name: carols, Description: "A smuggler nobody here has met."},
			} {
				if err := h.store.SetPersona(context.Background(), p); err != nil {
					t.Fatal(err)
				}
			}
			// Each line is answered before the next is posted, so that no
			// two lines make one turn.
			h.say("Maren, who keeps the lamp?")
			h.waitAnswered("who keeps the lamp")
			h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.bob, Content: "Maren, may I warm my hands?"})
			h.waitAnswered("may I warm my hands")
			h.say("Maren, we are two tonight.")
			h.waitAnswered("we are two tonight")
			h.waitVoices(3)

			tests := []struct {
				turn         string
				system, note string
				notWant      []string
			}{
				// Bob has not spoken yet: only Ada plays.
				{"who keeps the lamp", ada, "", []string{bob, bobNote}},
				// Bob's turn: his persona as the user's, Ada's in the note.
				{"may I warm my hands", bob, adaNote, []string{ada}},
				// Ada's turn: Bob stays present after speaking once.
				{"we are two tonight", ada, bobNote, []string{bob}},
			}
			for _, tt := range tests {
				sys, rest := h.systemFor(tt.turn)
				if !strings.Contains(sys, tt.system) {
					t.Errorf("the system message answering %q lacks %q:\n%s", tt.turn, tt.system, sys)
				}
				if !strings.Contains(rest, tt.note) {
					t.Errorf("the prompt answering %q lacks %q in its players note:\n%s", tt.turn, tt.note, rest)
				}
				for _, w := range append(tt.notWant, carols, "smuggler") {
					if strings.Contains(sys, w) || strings.Contains(rest, w) {
						t.Errorf("the prompt answering %q holds %q:\n%s\n%s", tt.turn, w, sys, rest)
					}
				}
			}
		})
	}
}
