package prompt

import (
	"fmt"
	"slices"
	"strings"

	"troupe/text"
)

// Player is another player present in a scene: the name the characters
// know them by, their persona as they wrote it, and the name their lines
// carry in the transcript (their display name) when it is another.
type Player struct {
	Name    string
	Persona string
	Shown   string
}

// How much of the other players' personas a prompt carries: the most
// recent MaxPlayers of them, each persona cut to MaxPlayerPersona
// characters and each name to maxPlayerName. Eight players with 2,000
// characters each would otherwise outweigh the card.
const (
	MaxPlayers       = 4
	MaxPlayerPersona = 300
	maxPlayerName    = 60
)

// playersNote renders the other players' personas as one user-role note:
// data about the people in the scene, what they say of themselves, never
// instructions with the system message's authority. players come most
// recent speaker first; the first MaxPlayers with a persona are kept and
// listed by name, so that the note, which stands before the transcript,
// stays the same from turn to turn while the same people play. Macros are
// not expanded ({{user}} there would name the wrong person), and line
// breaks are folded so that a persona cannot pose as another note. Empty
// when no player has a persona.
func playersNote(lang string, players []Player) string {
	type line struct{ name, shown, persona string }
	var lines []line
	for _, pl := range players {
		if len(lines) == MaxPlayers {
			break
		}
		persona := strings.Join(strings.Fields(pl.Persona), " ")
		name := strings.Join(strings.Fields(pl.Name), " ")
		if persona == "" || name == "" {
			continue
		}
		shown := strings.Join(strings.Fields(pl.Shown), " ")
		if shown == name {
			shown = ""
		}
		lines = append(lines, line{text.Clip(name, maxPlayerName), text.Clip(shown, maxPlayerName), text.Clip(persona, MaxPlayerPersona)})
	}
	if len(lines) == 0 {
		return ""
	}
	slices.SortStableFunc(lines, func(a, b line) int { return strings.Compare(a.name, b.name) })
	w := wordingFor(lang)
	var b strings.Builder
	b.WriteString(w.playersHeader)
	for _, l := range lines {
		b.WriteString("\n- ")
		b.WriteString(l.name)
		if l.shown != "" {
			b.WriteString(fmt.Sprintf(w.playersShown, l.shown))
		}
		b.WriteString(w.playersColon)
		b.WriteString(l.persona)
	}
	return b.String()
}
