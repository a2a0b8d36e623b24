package discord

import (
	"context"
	"strings"
	"testing"

	"troupe/adapters/discord/discordtest"
	"troupe/models"
	"troupe/models/testenv"
)

// systemFor is the system prompt of the model's chat request that answers
// a user line containing marker.
func (h *harness) systemFor(marker string) string {
	h.t.Helper()
	for _, req := range h.model.Requests() {
		sys, answers := "", false
		for _, m := range req.Messages {
			switch {
			case m.Role == "system" && sys == "":
				sys = m.Content
			case m.Role == "user" && strings.Contains(m.Content, marker):
				answers = true
			}
		}
		if answers {
			return sys
		}
	}
	h.t.Fatalf("no model request answers %q", marker)
	return ""
}

// TestScenePromptHoldsThePersonaOfEachPlayerPresent: two players with
// personas speak in one scene channel; the character's prompt holds each
// one's persona under its name once they have spoken, and never the
// persona of a third player who has one but never spoke there.
func TestScenePromptHoldsThePersonaOfEachPlayerPresent(t *testing.T) {
	t.Parallel()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{scene: true, dsn: b.DSN})
			carol := discordtest.User{ID: h.discord.NewID(), Username: "carol"}
			ada := "[Adalind]\nA cartographer with ink-stained fingers."
			bob := "[Brannoc]\nA ferry hand who never takes off his gloves."
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
			h.say("Maren, who keeps the lamp?")
			h.waitVoices(1)
			h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.bob, Content: "Maren, may I warm my hands?"})
			h.waitVoices(2)
			h.say("Maren, we are two tonight.")
			h.waitVoices(3)

			tests := []struct {
				turn    string
				want    []string
				notWant []string
			}{
				// Bob has not spoken yet: only Ada plays.
				{"who keeps the lamp", []string{ada}, []string{bob}},
				// Bob's turn: his persona as the user's, Ada's beside it.
				{"may I warm my hands", []string{bob, ada}, nil},
				// Ada's turn: Bob stays present after speaking once.
				{"we are two tonight", []string{ada, bob}, nil},
			}
			for _, tt := range tests {
				sys := h.systemFor(tt.turn)
				for _, w := range tt.want {
					if !strings.Contains(sys, w) {
						t.Errorf("the prompt answering %q lacks %q:\n%s", tt.turn, w, sys)
					}
				}
				for _, w := range append(tt.notWant, carols, "smuggler") {
					if strings.Contains(sys, w) {
						t.Errorf("the prompt answering %q holds %q:\n%s", tt.turn, w, sys)
					}
				}
			}
		})
	}
}
