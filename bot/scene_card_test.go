package bot_test

import (
	"strings"
	"testing"

	"troupe/cards"
	"troupe/models/testenv"
)

// TestCardThatNamesItsUserIsNoStranger: a card that says what the player is
// to its character with a macro ("{{user}} is her oldest friend") is read
// after its macros are filled, so its character does not call the player
// it answers a stranger; the same card without that line does (control).
func TestCardThatNamesItsUserIsNoStranger(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			// scene plays three turns in channel ch (the rigs of one
			// backend share its database) and returns the scene of the
			// last prompt, which answers Ada.
			scene := func(ch, line string) string {
				r := newRecordRigCard(t, b, 100, func(c *cards.Card) {
					c.Description, c.Scenario, c.FirstMes = "Maren keeps the lighthouse lamp."+line, "", "*The lamp burns.*"
				})
				r.say(t, ch, 1, "Ada", "Good evening.")
				r.say(t, ch, 2, "Bob", "Evening, all.")
				r.say(t, ch, 3, "Ada", "Do you remember me?")
				last, ok := r.fake.Last()
				if !ok {
					t.Fatal("no request")
				}
				out := ""
				for _, m := range last.Messages {
					if strings.HasPrefix(m.Content, "[Now]") {
						out = m.Content
					}
				}
				return out
			}
			if got := scene("c1", " She keeps to herself."); !strings.Contains(got, "- Ada: a stranger to you") {
				t.Fatalf("a card that does not name Ada: the prompt answering her does not call her a stranger, so the check cannot fail:\n%s", got)
			}
			if got := scene("c2", " {{user}} is her oldest friend."); strings.Contains(got, "- Ada: a stranger to you") {
				t.Errorf("the card names Ada as her oldest friend, yet the prompt answering her calls her a stranger:\n%s", got)
			}
		})
	}
}
