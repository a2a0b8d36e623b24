package memory

import (
	"strings"
	"testing"

	"troupe/cards"
)

// TestSystemTextPlayersPersonas: the other players present follow the
// user's persona, each under its name (brackets in English, 【】 in
// Chinese), in the order given; their text is not run through the macros,
// where {{user}} would name the speaking user; with none the text is what a
// one-player prompt always was.
func TestSystemTextPlayersPersonas(t *testing.T) {
	t.Parallel()
	card := cards.Card{Name: "Maren", Description: "Keeper of the lamp."}
	players := []Player{{Name: "Brannoc", Persona: " Wears gloves; calls {{user}} a friend. "}, {Name: "Carys", Persona: "A smuggler."}, {Name: "Nobody", Persona: ""}}
	tests := []struct {
		lang, user, others string
	}{
		{"en", "[Ada]\nA cartographer.", "\n\n[Brannoc]\nWears gloves; calls {{user}} a friend.\n\n[Carys]\nA smuggler."},
		{"zh", "【Ada】\nA cartographer.", "\n\n【Brannoc】\nWears gloves; calls {{user}} a friend.\n\n【Carys】\nA smuggler."},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			t.Parallel()
			env := func() *cards.Env { return &cards.Env{Char: "Maren", User: "Ada"} }
			alone := systemText(&CardText{Card: card, Env: env(), User: "Ada", Persona: "A cartographer."}, tt.lang, nil)
			got := systemText(&CardText{Card: card, Env: env(), User: "Ada", Persona: "A cartographer.", Players: players}, tt.lang, nil)
			if !strings.HasSuffix(alone, tt.user) {
				t.Fatalf("a one-player system text does not end with the user's persona:\n%s", alone)
			}
			if got != alone+tt.others {
				t.Errorf("got system text\n%s\nwant the one-player text followed by\n%s", got, tt.others)
			}
		})
	}
}
