package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/cards"
	"troupe/memory/memorytest"
)

// TestLorebookReachesThePrompt plays a card with a lorebook through the
// pipeline: the entry is in the system message of the turn that names its
// key, and not in a turn that does not.
func TestLorebookReachesThePrompt(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	card, _ := r.p.Cards().Default()
	card.Book = &cards.CharacterBook{Entries: []cards.LoreEntry{
		{Keys: []string{"lighthouse bell"}, Content: "The lighthouse bell was cast from {{user}}'s grandfather's anchor."},
	}}
	r.p.Cards().Add(card)
	ctx := context.Background()
	ref := bot.ChannelRef{Platform: "console", ID: "lore", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
	say := func(id, text string) {
		t.Helper()
		s := &discardSink{}
		must(t, r.p.Handle(ctx, bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: id, Text: text}, s))
		if len(s.notices) > 0 {
			t.Fatalf("notices: %q", s.notices)
		}
	}
	say("1", "Good evening. The fog is thick tonight.")
	say("2", "Why does the lighthouse bell sound so low?")
	plain := memorytest.TurnRequest(t, r.fake, "fog is thick").Messages[0].Content
	asked := memorytest.TurnRequest(t, r.fake, "lighthouse bell sound").Messages[0].Content
	const lore = "The lighthouse bell was cast from Ada's grandfather's anchor."
	if strings.Contains(plain, lore) {
		t.Errorf("the entry was in a turn that did not name it:\n%s", plain)
	}
	if !strings.Contains(asked, lore) {
		t.Errorf("the entry is not in the system message of the turn that named it:\n%s", asked)
	}
}
