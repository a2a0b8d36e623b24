package bot_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/cards/cardstest"
	"troupe/cards/cardstest/wilddir"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// loreRig is a pipeline on a fresh SQLite file playing one card, with a
// fixed clock and fixed randomness.
type loreRig struct {
	st   *models.Store
	fake *openaitest.Server
	p    *bot.Pipeline
}

func newLoreRig(t *testing.T, card cards.Card, set func(*bot.Options)) *loreRig {
	t.Helper()
	st, err := models.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "lore.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fake := openaitest.NewServer(t)
	fake.SetResponder((&memorytest.Scribe{}).Respond)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	lib, err := cards.NewLibrary([]cards.Card{card}, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 21, 5, 0, 0, time.UTC)
	opt := bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(),
		MemoryConfig: config.Default().Memory, LoreConfig: config.Default().Lore, Language: "en",
		ContextWindow: 128000, MaxReplyTokens: 256, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }, Rand: func() float64 { return 0.3 }}
	if set != nil {
		set(&opt)
	}
	return &loreRig{st: st, fake: fake, p: bot.New(opt)}
}

// say plays one user message on the console channel ch.
func (r *loreRig) say(t *testing.T, ch, id, text string) {
	t.Helper()
	s := &discardSink{}
	ref := bot.ChannelRef{Platform: "console", ID: ch, SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
	if err := handle(context.Background(), r.p, bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: id, Text: text}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.notices) > 0 {
		t.Fatalf("notices: %q", s.notices)
	}
}

// TestLorebookReachesThePrompt plays a card with a lorebook through the
// pipeline: the entry is in the system message of the turn that names its
// key, and not in a turn that does not.
func TestLorebookReachesThePrompt(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	card, _ := r.p.Cards().Default()
	book, err := cards.ParseBook([]byte(`{"entries":[{"keys":["lighthouse bell"],"content":"The lighthouse bell was cast from {{user}}'s grandfather's anchor."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	card.Book = book
	r.p.Cards().Add(card)
	ctx := context.Background()
	ref := bot.ChannelRef{Platform: "console", ID: "lore", SpaceKind: bot.SpaceLocal, SpaceID: "ada"}
	say := func(id, text string) {
		t.Helper()
		s := &discardSink{}
		must(t, handle(ctx, r.p, bot.Inbound{Channel: ref, AuthorID: "ada", AuthorName: "Ada", MessageID: id, Text: text}, s))
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

// TestLoreGoldenPrompts plays five turns of a V3 card with a nickname, a
// Character's Note, {{original}} in its system prompt and post-history
// instructions, <START>-separated examples and macros, whose lorebook uses
// every position, whole-word and regex keys, the four secondary logics,
// sticky, cooldown and delay, an inclusion group, recursion, a budget that
// cuts, and a world file the card names. Each turn's prompt is a golden file
// (testdata/cards/lore-v3-turnN.golden, rewritten with -update).
func TestLoreGoldenPrompts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "lore_v3_card.json"))
	if err != nil {
		t.Fatal(err)
	}
	card, err := cards.ParseCard(data)
	if err != nil {
		t.Fatal(err)
	}
	card.ID = "maren"
	worlds, errs := cards.LoadWorlds("testdata")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var logs testenv.Buffer
	r := newLoreRig(t, card, func(o *bot.Options) {
		o.Worlds = worlds
		o.LoreConfig.BudgetTokens = 120
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	turns := []string{
		"I work as a barista near the LightHouse. The bell rings; the tide is out. Is there a gate key?",
		"Let's go to the bar. The bell again. A ship is in, and the sky is grey.",
		"Fog rolls in over the sea, a storm is coming, and there are ghost stories at the market.",
		"The bell. The tide. A whisper.",
		"The gate has a lock and a key.",
	}
	for i, text := range turns {
		r.say(t, "golden", string(rune('1'+i)), text)
		req := memorytest.TurnRequest(t, r.fake, text)
		goldenPrompt(t, "lore-v3-turn"+string(rune('1'+i)), req)
	}
	// What was called up but left out is logged at debug, with why.
	for _, want := range []string{
		`entry=15 comment="" reason="delay: not before turn 4"`,
		`entry=14 comment="" reason="cooldown until turn 3"`,
		`entry=16 comment="" reason="inclusion group weather has another entry"`,
		`entry=18 comment="" reason="budget: `,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, logs.String())
		}
	}
}

// TestPlainCardKeepsNoLoreState: a card without lore or chat variables
// costs no lore query and leaves no state row.
func TestPlainCardKeepsNoLoreState(t *testing.T) {
	card, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	r := newLoreRig(t, card, nil)
	r.say(t, "plain", "1", "Good evening.")
	chats, err := r.st.ChannelChats(context.Background(), "console:plain")
	if err != nil || len(chats) != 1 {
		t.Fatalf("chats = %d (%v)", len(chats), err)
	}
	if _, err := r.st.ChatLoreState(context.Background(), chats[0].ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a plain card stored lore state (err %v)", err)
	}
}

// TestLoreGoldenECMAScriptKeys plays a card whose lorebook writes its keys
// as JavaScript regular expressions — lookahead, negative lookahead,
// lookbehind, a back reference, a named group with the s flag — and one
// that does not compile, which matches nothing but its own text: each
// turn's prompt is a golden file
// (testdata/cards/lore-regex-turnN.golden).
func TestLoreGoldenECMAScriptKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "lore_regex_card.json"))
	if err != nil {
		t.Fatal(err)
	}
	card, err := cards.ParseCard(data)
	if err != nil {
		t.Fatal(err)
	}
	card.ID = "ilse"
	if w := card.Book.Warnings(); len(w) != 1 || !strings.Contains(w[0], `entry 6 ("broken")`) {
		t.Errorf("warnings: %q", w)
	}
	r := newLoreRig(t, card, nil)
	turns := []struct {
		text string
		want []string
		not  []string
	}{
		{"A shadowfang? Near the old oak?", []string{"packs of three", "The old oak marks"}, []string{"against the wind", "repeats a word", "quoted oath"}},
		{"A shadow, shadow moved. I swear: \"I'll stay\"\nunder this moon.", []string{"against the wind", "Ilse notices when Ada repeats", "quoted oath"}, []string{"packs of three", "The old oak marks"}},
		{"Oak trees and wolf tracks; the wolf howls.", nil, []string{"A wolf's cry", "The old oak marks", "packs of three"}},
	}
	for i, tt := range turns {
		n := string(rune('1' + i))
		r.say(t, "regex", n, tt.text)
		req := memorytest.TurnRequest(t, r.fake, tt.text)
		sys := req.Messages[0].Content
		for _, w := range tt.want {
			if !strings.Contains(sys, w) {
				t.Errorf("turn %s: %q is not in the prompt", n, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(sys, w) {
				t.Errorf("turn %s: %q is in the prompt", n, w)
			}
		}
		goldenPrompt(t, "lore-regex-turn"+n, req)
	}
}

// TestLoreGoldenSeraphinaEldoria plays the collected Seraphina card with
// its Eldoria world, laid out as SillyTavern keeps them (characters/ and
// worlds/ side by side): the card's book and the world are the same four
// entries, and each goes in once (testdata/cards/seraphina-eldoria.golden).
// It needs the folder of collected cards and skips without it.
func TestLoreGoldenSeraphinaEldoria(t *testing.T) {
	root := t.TempDir()
	chars := filepath.Join(root, "characters")
	for path, name := range map[string]string{
		filepath.Join(chars, "Seraphina.png"):         "st-seraphina.png",
		filepath.Join(root, "worlds", "Eldoria.json"): "st-eldoria-worldinfo.json",
	} {
		data := wilddir.File(t, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	card, err := cards.LoadCard(filepath.Join(chars, "Seraphina.png"))
	if err != nil {
		t.Fatal(err)
	}
	worlds, errs := cards.LoadWorlds(chars)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var logs testenv.Buffer
	r := newLoreRig(t, card, func(o *bot.Options) {
		o.Worlds = worlds
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	const text = "What is Eldoria? Are the shadowfang beasts near? Is the glade a refuge, and what is your magic?"
	r.say(t, "seraphina", "1", text)
	req := memorytest.TurnRequest(t, r.fake, text)
	var all strings.Builder
	for _, m := range req.Messages {
		all.WriteString(m.Content)
	}
	eldoria, ok := worlds.Get("Eldoria")
	if !ok {
		t.Fatalf("the world beside the card folder is not found; worlds: %v", worlds.Names())
	}
	for _, e := range eldoria.Entries {
		probe := firstLine(cards.Expand(e.Content, card.CharName(), "Ada"))
		if n := strings.Count(all.String(), probe); n != 1 {
			t.Errorf("entry %s (%.40q) is in the prompt %d times, want once", e.UID, probe, n)
		}
	}
	if strings.Contains(logs.String(), "world") {
		t.Errorf("the linked world was not found:\n%s", logs.String())
	}
	goldenPrompt(t, "seraphina-eldoria", req)
}

// TestLoreGoldenWorldBesideCards plays the project's own V2 card, which
// links the world Harbor, from a card folder with Harbor in a worlds/
// folder beside it: the world's entries reach the prompt, and the entry
// the card's book holds too goes in once
// (testdata/cards/world-beside.golden). A card whose world is nowhere is
// logged once, at warn, naming where it was looked for.
func TestLoreGoldenWorldBesideCards(t *testing.T) {
	root := t.TempDir()
	chars := filepath.Join(root, "characters")
	for path, data := range map[string][]byte{
		filepath.Join(chars, "wren.json"):            cardstest.Own(t, "v2.json"),
		filepath.Join(root, "worlds", "Harbor.json"): cardstest.Own(t, "worlds/Harbor.json"),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	card, err := cards.LoadCard(filepath.Join(chars, "wren.json"))
	if err != nil {
		t.Fatal(err)
	}
	worlds, errs := cards.LoadWorlds(chars)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := newLoreRig(t, card, func(o *bot.Options) { o.Worlds = worlds })
	const text = "Is the market open? The quay looks wet, and they say the shoals of Saltmere moved."
	r.say(t, "beside", "1", text)
	req := memorytest.TurnRequest(t, r.fake, text)
	sys := req.Messages[0].Content
	for probe, want := range map[string]int{"The fish market opens at four.": 1, "The Saltmere quay floods": 1, "The shoals of Saltmere shift": 1} {
		if n := strings.Count(sys, probe); n != want {
			t.Errorf("%q is in the prompt %d times, want %d", probe, n, want)
		}
	}
	goldenPrompt(t, "world-beside", req)

	var logs testenv.Buffer
	lost := newLoreRig(t, card, func(o *bot.Options) {
		o.Worlds, _ = cards.LoadWorlds(filepath.Join(root, "nowhere", "cards"))
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	lost.say(t, "lost", "1", text)
	lost.say(t, "lost", "2", "And the quay?")
	if n := strings.Count(logs.String(), "card names a world that is not loaded"); n != 1 || !strings.Contains(logs.String(), "level=WARN") ||
		!strings.Contains(logs.String(), "world=Harbor") || !strings.Contains(logs.String(), filepath.Join(root, "nowhere", "cards", "worlds")) {
		t.Errorf("the missing world is not logged once at warn with where it was looked for:\n%s", logs.String())
	}
}

// TestTracedPromptListsTheLoreThatFired: with prompt traces on, a reply's
// trace lists the lorebook entries its prompt held (book, uid, comment,
// tokens), a turn that called up none lists none, and the card's lore
// firings count the turns that held each.
func TestTracedPromptListsTheLoreThatFired(t *testing.T) {
	card, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	book, err := cards.ParseBook([]byte(`{"name":"Bells","entries":[{"uid":41,"comment":"the bell","keys":["bell"],"content":"The lighthouse bell was cast from an anchor."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	card.Book = book
	web := config.Default().Web
	web.Token, web.Prompts = "a-token-of-twenty-chars", 10
	r := newLoreRig(t, card, func(o *bot.Options) { o.PromptTraces, o.ModelName = web.PromptTraces(), "m" })
	ctx := context.Background()
	r.say(t, "fired", "1", "Good evening. The fog is thick tonight.")
	r.say(t, "fired", "2", "Why does the bell sound so low?")
	r.say(t, "fired", "3", "And the bell tower, who built it?")
	ch, err := r.st.Channel(ctx, "console:fired")
	if err != nil {
		t.Fatal(err)
	}
	// Traces are written off the turn's path.
	var traces []models.PromptTrace
	for i := 0; ; i++ {
		traces, err = r.st.ChatPromptTraces(ctx, ch.CurrentChatID, 10)
		if err == nil && len(traces) == 3 {
			break
		}
		if i == 500 {
			t.Fatalf("traces: %d, %v; want 3", len(traces), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	first := waitTrace(t, r.st, traces[2].MessageID)
	if len(first.Lore) != 0 {
		t.Errorf("the turn that named no key lists lore %+v", first.Lore)
	}
	second := waitTrace(t, r.st, traces[1].MessageID)
	if len(second.Lore) != 1 || second.Lore[0].UID != "41" || second.Lore[0].Comment != "the bell" || second.Lore[0].Tokens <= 0 {
		t.Errorf("the bell turn's trace lists lore %+v, want entry 41 (the bell) with its tokens", second.Lore)
	}
	fired, err := r.st.LoreFired(ctx, card.ID, 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(fired) != 1 || fired[0].Turns != 2 || fired[0].LastReply != traces[0].MessageID {
		t.Errorf("lore fired = %+v, want entry 41 in two turns, the last the newest reply", fired)
	}
}
