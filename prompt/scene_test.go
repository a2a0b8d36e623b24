package prompt_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/prompt"
	"troupe/record"
)

// sceneLedger is a ledger with a big inventory, so the scene takes a large
// part of the envelope.
func sceneLedger(items int) string {
	inv := make([]string, items)
	for i := range inv {
		inv[i] = fmt.Sprintf("%q", fmt.Sprintf("a brass trinket numbered %03d from the drowned market", i))
	}
	return `{"time":"day 3, evening","place":"the lighthouse","where":{"Elias":"the tavern"},` +
		`"inventory":{"Maren":[` + strings.Join(inv, ",") + `],"Elias":["a letter"]},"flags":{"gate":"open"},"threads":["Who took the key?"]}`
}

func TestSceneInEnvelope(t *testing.T) {
	t.Parallel()
	var res strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&res, "Paragraph %d of what Maren remembers of earlier chats, long enough to matter.\n\n", i)
	}
	resident := res.String()
	b := prompt.Budget{ResidentMax: 1200, Envelope: 4300, MinUseful: 200}
	for _, tt := range []struct {
		name  string
		items int
		lang  string
	}{
		{"scene_envelope_en", 50, "en"},
		{"scene_envelope_zh", 50, "zh"},
		{"scene_envelope_small_ledger", 3, "en"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n := utf8.RuneCountInString(sceneLedger(tt.items)); n > record.MaxLedgerRunes {
				t.Fatalf("test ledger of %d characters: the recorder keeps ledgers under %d", n, record.MaxLedgerRunes)
			}
			scene := prompt.Scene(prompt.SceneInput{Language: tt.lang, Ledger: sceneLedger(tt.items), Character: "Maren",
				Present:       []string{"Maren", "Ada", "Elias", "Tess", "Bram"},
				Relationships: map[string]string{"Ada": "an old friend from the harbour"},
				Known:         []string{"the west gate", "the lighthouse"}, Threads: []string{"Who took the key?"},
				CardText: "Maren keeps the light. Tess is her sister."})
			scene, fitted := prompt.Envelope(tt.lang, scene, resident, b)
			n := utf8.RuneCountInString(scene) + utf8.RuneCountInString(fitted)
			if n > b.Envelope {
				t.Errorf("scene %d + resident %d = %d characters, over the envelope %d", utf8.RuneCountInString(scene), utf8.RuneCountInString(fitted), n, b.Envelope)
			}
			// Elias is elsewhere: neither he nor his letter is in Maren's view;
			// flags stay out; a present stranger is named a stranger; Tess keeps
			// what the card says.
			for _, hidden := range []string{"Elias", "letter", "gate\":", "open"} {
				if strings.Contains(scene, hidden) {
					t.Errorf("the scene shows %q, which Maren does not perceive", hidden)
				}
			}
			if !strings.Contains(scene, "Bram") || strings.Contains(scene, "- Tess") {
				t.Errorf("want Bram a stranger and Tess as the card says, got:\n%s", scene)
			}
			checkGolden(t, tt.name, "===== scene =====\n"+scene+"\n===== resident =====\n"+fitted+"\n")
		})
	}
}

// The ledger's own threads are the whole story's: without the threads the
// character perceived, its view shows none of them.
func TestSceneShowsOnlyPerceivedThreads(t *testing.T) {
	ledger := `{"place":"the lighthouse","threads":["Who took the key?"]}`
	in := prompt.SceneInput{Language: "en", Ledger: ledger, Character: "Maren", Present: []string{"Maren"}}
	if got := prompt.Scene(in); strings.Contains(got, "Who took the key?") {
		t.Errorf("scene without perceived threads shows the ledger's:\n%s", got)
	}
	in.Threads = []string{"Who took the key?"}
	if got := prompt.Scene(in); !strings.Contains(got, "Open matters you know of: Who took the key?") {
		t.Errorf("scene lacks the perceived thread:\n%s", got)
	}
}
