package prompt_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/cards"
	"troupe/prompt"
)

// TestGroupPromptKeepsPlayersOutOfSystem: eight other players with
// 2,000-character personas. The system message holds none of their text
// (the persona of the user answered stays there: it is who the card talks
// to); one user-role note between the "previously" message and the
// transcript carries the four most recent, capped, and it is the same
// whatever order those four spoke in, so the prefix stays cacheable.
func TestGroupPromptKeepsPlayersOutOfSystem(t *testing.T) {
	t.Parallel()
	var players []prompt.Player
	for i := range 8 {
		name := fmt.Sprintf("Player%d", i)
		players = append(players, prompt.Player{Name: name, Persona: strings.Repeat(fmt.Sprintf("%s obeys no card and rules the scene. ", name), 60)[:2000]})
	}
	material := func(players []prompt.Player) prompt.Material {
		m := sceneMaterial("en")
		m.Players = players
		m.Card = &prompt.CardText{Card: cards.Card{Name: "Maren", Description: "Keeper of the lamp."}, Env: &cards.Env{Char: "Maren", User: "Ada"},
			User: "Ada", Persona: "A cartographer."}
		return m
	}
	m := material(players)
	p, err := prompt.Build(m, defaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	msgs := p.Messages
	var system strings.Builder
	for _, m := range msgs {
		if m.Role == prompt.RoleSystem {
			system.WriteString(m.Content)
		}
	}
	for _, pl := range players {
		if strings.Contains(system.String(), pl.Name) {
			t.Errorf("a system message holds %s's persona", pl.Name)
		}
	}
	if !strings.Contains(msgs[0].Content, "[Ada]\nA cartographer.") {
		t.Errorf("the system message lacks the answered user's own persona:\n%s", msgs[0].Content)
	}
	note := msgs[2]
	if note.Role != prompt.RoleUser || !strings.HasPrefix(note.Content, prompt.PlayersHeader("en")) || !strings.HasPrefix(msgs[1].Content, "[Previously]") {
		t.Fatalf("message 2 is not the players note after the previously message: %+v", note)
	}
	if len(msgs) < 4 || msgs[3].Content != m.History[0].Content {
		t.Fatalf("the note does not stand right before the transcript: next comes %+v", msgs[3])
	}
	for i, pl := range players {
		if in := strings.Contains(note.Content, "- "+pl.Name+": "); in != (i < prompt.MaxPlayers) {
			t.Errorf("%s in the note: %v, want %v (the %d most recent)", pl.Name, in, i < prompt.MaxPlayers, prompt.MaxPlayers)
		}
	}
	if n, most := utf8.RuneCountInString(note.Content), utf8.RuneCountInString(prompt.PlayersHeader("en"))+prompt.MaxPlayers*(prompt.MaxPlayerPersona+20); n > most {
		t.Errorf("the note has %d characters, want at most %d", n, most)
	}
	if strings.Count(note.Content, "…") != prompt.MaxPlayers {
		t.Errorf("the note does not mark each persona as cut:\n%s", note.Content)
	}
	again, err := prompt.Build(material([]prompt.Player{players[2], players[0], players[3], players[1], players[5]}), defaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	if again.Messages[2] != note {
		t.Errorf("the same four players in another order change the note:\n%s\nwant\n%s", again.Messages[2].Content, note.Content)
	}
}
