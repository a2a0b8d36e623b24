package bot_test

import (
	"context"
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/cards"
	"troupe/cards/cardstest"
	"troupe/fakes/openaitest"
	"troupe/internal/golden"
)

// playCard plays one turn of card on a fresh rig and returns the request
// the model got and the stored opening of the chat.
func playCard(t *testing.T, card cards.Card, text string) (openaitest.Request, string) {
	t.Helper()
	r := newRigCard(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"), nil, 128000, card)
	ctx := context.Background()
	ref := bot.ChannelRef{Platform: "console", ID: "c", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
	s := &discardSink{}
	if err := handle(ctx, r.p, bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: "1", Text: text}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.notices) > 0 {
		t.Fatalf("notices: %q", s.notices)
	}
	req, ok := r.fake.Last()
	if !ok {
		t.Fatal("the model got no request")
	}
	chats, err := r.st.ChannelChats(ctx, "console:c")
	if err != nil || len(chats) != 1 {
		t.Fatalf("chats = %v, %v", chats, err)
	}
	br, err := r.st.LoadBranch(ctx, chats[0].HeadID)
	if err != nil {
		t.Fatal(err)
	}
	opening := ""
	if len(br.Uncovered) > 0 && br.Uncovered[0].Role == "assistant" {
		opening = br.Uncovered[0].Content
	}
	return req, opening
}

// TestWildCardsPlay plays a turn of every card collected from public
// repositories with the fake model: the chat opens with the card's
// greeting, the model gets the card's text, and neither mes_example's
// <START> nor {{char}}/{{user}} reach it.
func TestWildCardsPlay(t *testing.T) {
	// The collection's two files that are not cards have nothing to play
	// (cards' TestWildCards checks why).
	playCardFiles(t, cardstest.WildFiles(t), "st-index.json", "st-eldoria-worldinfo.json")
}

// TestOwnCardsPlay is TestWildCardsPlay over the project's own card of
// each format.
func TestOwnCardsPlay(t *testing.T) {
	playCardFiles(t, cardstest.OwnFiles(t), "own-harbor-worldinfo.json")
}

// playCardFiles plays a turn of each card of files; notCards are the files
// that are no card, and any other that does not load fails.
func playCardFiles(t *testing.T, files []string, notCards ...string) {
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			card, err := cards.LoadCard(path)
			if errors.Is(err, cards.ErrNotCard) {
				if !slices.Contains(notCards, name) {
					t.Fatalf("%s does not load as a card: %v", name, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, opening := playCard(t, card, "Hello! Who are you, and where are we?")
			if want := card.Greeting("Ada"); opening != want {
				t.Errorf("the chat opens with %.80q, want the card's greeting %.80q", opening, want)
			}
			var all strings.Builder
			for _, m := range req.Messages {
				all.WriteString(m.Content + "\n")
			}
			sent := all.String()
			if opening != "" && !strings.Contains(sent, opening) {
				t.Errorf("the greeting did not reach the model")
			}
			probe := card.Description
			if probe == "" {
				probe = card.SystemPrompt
			}
			probe = firstLine(cards.Expand(probe, card.CharName(), "Ada"))
			if !strings.Contains(sent, probe) {
				t.Errorf("the card's text %.60q is not in the prompt", probe)
			}
			low := strings.ToLower(sent)
			// <START> separates mes_example's dialogues; some cards write
			// it into their description too, which is sent as it is.
			own := strings.ToLower(card.Description + card.Personality + card.Scenario + card.SystemPrompt + card.FirstMes)
			for _, bad := range []string{"<start>", "{{char}}", "{{user}}"} {
				if strings.Contains(low, bad) && !(bad == "<start>" && strings.Contains(own, bad)) {
					t.Errorf("%s reached the model", bad)
				}
			}
			t.Logf("%s (%s) played a turn; exercised %s", name, card.Name, strings.Join(cardstest.Features(card), ", "))
		})
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60])
	}
	return strings.TrimSpace(s)
}

// goldenPrompt compares the messages of req with testdata/cards/NAME.golden
// (rewritten with -update).
func goldenPrompt(t *testing.T, name string, req openaitest.Request) {
	t.Helper()
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString("===== " + m.Role + " =====\n" + m.Content + "\n")
	}
	golden.Check(t, filepath.Join("testdata", "cards", name+".golden"), b.String())
}

// writeCardFile writes data as a card file and loads it.
func writeCardFile(t *testing.T, name string, data []byte) cards.Card {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := cards.LoadCard(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	wrenV2 = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Wren","description":"OLD TEXT from the chara chunk.","first_mes":"OLD greeting."}}`
	wrenV3 = `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Wren","nickname":"Pilot Wren",` +
		`"description":"{{char}} is the harbour pilot; she knows every rock between the breakwater and the lighthouse.",` +
		`"personality":"Dry, patient, exact.","first_mes":"Mind the rocks, {{user}}. {{char}} has you.",` +
		`"mes_example":"<START>\n{{user}}: Is it safe?\n{{char}}: Nothing on the water is safe.\n<START>\n{{user}}: Thanks.\n{{char}}: Pay the harbour, not me.",` +
		`"extensions":{"depth_prompt":{"prompt":"Wren never hurries.","depth":2,"role":"system"}}}}`
)

// TestPromptGoldenPNGBothChunks: a PNG whose chara and ccv3 chunks disagree
// plays from ccv3 (V3, with a nickname for {{char}} and <START> examples).
func TestPromptGoldenPNGBothChunks(t *testing.T) {
	t.Parallel()
	pic := cardstest.Picture(t, 8, 8, color.RGBA{R: 200, A: 255})
	card := writeCardFile(t, "wren.png", cardstest.PNG(t, pic, cardstest.CardChunk("chara", wrenV2), cardstest.CardChunk("ccv3", wrenV3)))
	req, opening := playCard(t, card, "Take me past the breakwater, please.")
	if opening != "Mind the rocks, Ada. Pilot Wren has you." {
		t.Errorf("opening = %q", opening)
	}
	if card.DepthPrompt == nil || card.DepthPrompt.Depth != 2 || len(card.Examples) != 2 || len(card.Image) == 0 {
		t.Errorf("card = depth prompt %+v, %d examples, %d image bytes", card.DepthPrompt, len(card.Examples), len(card.Image))
	}
	goldenPrompt(t, "png-both-chunks", req)
}

// TestPromptGoldenCHARX plays a CHARX card whose icon is the avatar.
func TestPromptGoldenCHARX(t *testing.T) {
	t.Parallel()
	icon := cardstest.Picture(t, 4, 4, color.RGBA{B: 200, A: 255})
	cardJSON := `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ottoline","nickname":"Otto",` +
		`"description":"{{char}} keeps the tide tables of the old port.","scenario":"A wet evening at the harbour office.",` +
		`"first_mes":"Tide's turning, {{user}}.","system_prompt":"You are {{char}}. Speak briefly.",` +
		`"assets":[{"type":"icon","uri":"embeded://assets/icon/main.png","name":"main","ext":"png"}]}}`
	card := writeCardFile(t, "otto.charx", cardstest.CHARX(t, map[string][]byte{
		"card.json": []byte(cardJSON), "assets/icon/main.png": icon, "assets/other/big.bin": make([]byte, 1<<16),
	}))
	if string(card.Image) != string(icon) {
		t.Errorf("the avatar is %d bytes, want the icon's %d", len(card.Image), len(icon))
	}
	req, _ := playCard(t, card, "When is high water?")
	goldenPrompt(t, "charx", req)
}

// TestPromptGoldenV3Nickname plays a V3 JSON card (with a byte order mark and
// a number where text belongs) whose nickname is what {{char}} becomes.
func TestPromptGoldenV3Nickname(t *testing.T) {
	t.Parallel()
	cardJSON := "\xEF\xBB\xBF" + `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Bartholomew Quill","nickname":"Bart",` +
		`"description":"{{char}} runs the ferry; {{user}} is his only passenger tonight.","personality":"Talkative.",` +
		`"first_mes":"Evening, {{user}}. Bart's the name.","character_version":2,` +
		`"post_history_instructions":"Keep {{char}}'s replies under three sentences.","tags":"ferry"}}`
	card := writeCardFile(t, "bart.json", []byte(cardJSON))
	if card.CharName() != "Bart" || card.CharacterVersion != "2" || len(card.Tags) != 1 {
		t.Errorf("card = nickname %q, version %q, tags %q", card.Nickname, card.CharacterVersion, card.Tags)
	}
	req, _ := playCard(t, card, "How long is the crossing?")
	goldenPrompt(t, "v3-nickname", req)
}
