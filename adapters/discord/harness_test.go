package discord

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/cards"
	"troupe/models/testenv"
	"troupe/prompt"

	"troupe/adapters/discord/discordtest"
	"troupe/bot"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
)

// cardAvatar is the avatar the test card speaks with.
const cardAvatar = "https://cdn.example.com/maren.png"

// harness is an adapter on a pipeline with a fake model, connected to a
// fake Discord with one guild and one bound channel.
type harness struct {
	t       *testing.T
	discord *discordtest.Server
	model   *openaitest.Server
	store   *models.Store
	mem     *memory.Service
	p       *bot.Pipeline
	a       *Adapter
	clock   *clock
	logs    *testenv.Buffer

	guild, channel string
	ada, bob       discordtest.User

	cancel context.CancelFunc
	done   chan error
}

type setup struct {
	// card changes the test card before the library is made.
	card   func(*cards.Card)
	cfg    func(*config.Discord)
	before func(*discordtest.Server)
	tuning func(*tuning)
	// scene adds a second card, Ilse, and plays both in the channel.
	scene bool
	// dsn is the store's database; "" is a fresh SQLite file.
	dsn string
	// recorder turns the recorder on: turns store their plain events,
	// which the test records and reflects on through h.mem.
	recorder bool
	// inGuild adds to the harness's guild before the bot connects.
	inGuild func(d *discordtest.Server, guildID string)
	// record turns on the recorder (a batch of one, run as each turn
	// leaves it owed) and recall.
	record bool
	// observer, when set, is the pipeline's; wrap, when set, stands
	// between the adapter and the pipeline.
	observer bot.Observer
	wrap     func(bot.Engine) bot.Engine
	// pipeline changes the pipeline's options (its media endpoints: the
	// fake model's client) before it is made.
	pipeline func(*bot.Options, *llm.Client)
}

// ilseAvatar is the avatar of the second card of a scene.
const ilseAvatar = "https://cdn.example.com/ilse.png"

// clock is the pipeline's clock; tests move it to expire questions.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

func newHarness(t *testing.T, su setup) *harness {
	t.Helper()
	ctx := context.Background()
	if su.dsn == "" {
		su.dsn = "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	}
	st, err := models.Open(ctx, su.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	model := openaitest.NewServer(t)
	card, err := cards.LoadCard("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	card.Avatar = cardAvatar
	if su.card != nil {
		su.card(&card)
	}
	deck := []cards.Card{card}
	if su.scene {
		ilse := card
		ilse.ID, ilse.Name, ilse.Avatar = "ilse", "Ilse", ilseAvatar
		ilse.Description = "Ilse rows the ferry across the black lake."
		deck = append(deck, ilse)
	}
	lib, err := cards.NewLibrary(deck, "")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{}
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client := llm.New(llm.Config{BaseURL: model.URL(), Model: "m"}, nil)
	mc := config.Default().Memory
	mem := memory.NewService(st, llm.Scribe{C: client}, memory.Config{
		Compact:          memory.CompactParams{Keep: mc.Keep, Period: mc.Period, MinCutChars: mc.MinCutChars, ManualMinCutChars: mc.ManualMinCutChars},
		ResidentMaxChars: mc.ResidentMaxChars, EnvelopeChars: mc.EnvelopeChars, MinUsefulChars: mc.MinUsefulChars,
		RecapMaxChars: mc.RecapMaxChars, Language: "en",
	}, log)
	opt := bot.Options{Store: st, Cards: lib, Model: client, Memory: mem,
		MemoryConfig: mc, Language: "en", Now: clk.now, Logger: log}
	if su.recorder {
		opt.Recorder = config.Recorder{Enabled: true, Batch: 100}
	}
	if su.record {
		opt.Jobs = recordNow{mem: mem}
		opt.Recorder = config.Recorder{Enabled: true, Batch: 1}
		opt.Recall = config.Default().Recall
		opt.Tokens = prompt.NewEstimator()
		opt.ContextWindow, opt.MaxReplyTokens = 128000, 256
	}
	opt.Observer = su.observer
	if su.pipeline != nil {
		su.pipeline(&opt, client)
	}
	p := bot.New(opt)

	d := discordtest.NewServer(t, discordtest.Options{Echo: true})
	h := &harness{t: t, discord: d, model: model, store: st, mem: mem, p: p, clock: clk, logs: logs,
		ada: discordtest.User{ID: d.NewID(), Username: "ada", GlobalName: "Ada"},
		bob: discordtest.User{ID: d.NewID(), Username: "bob"}}
	h.guild = d.AddGuild("Lantern Hall")
	h.channel = d.AddChannel(h.guild, "roleplay")
	if err := p.Bind(ctx, h.ref(h.channel), card.ID); err != nil {
		t.Fatal(err)
	}
	if su.scene {
		if err := p.BindCast(ctx, h.ref(h.channel), []string{card.ID, "ilse"}); err != nil {
			t.Fatal(err)
		}
	}
	if su.inGuild != nil {
		su.inGuild(d, h.guild)
	}
	if su.before != nil {
		su.before(d)
	}
	cfg := config.Discord{Token: config.Secret(d.Token()), APIBaseURL: d.URL(), CDNBaseURL: d.CDNURL(), ShardCount: 1, AllowDMs: true}
	if su.cfg != nil {
		su.cfg(&cfg)
	}
	var engine bot.Engine = p
	if su.wrap != nil {
		engine = su.wrap(p)
	}
	a, err := New(cfg, engine, log)
	if err != nil {
		t.Fatal(err)
	}
	a.tuning.retryWait = 20 * time.Millisecond
	a.tuning.drain = 10 * time.Second
	if su.tuning != nil {
		su.tuning(&a.tuning)
	}
	h.a = a
	runCtx, cancel := context.WithCancel(ctx)
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- a.Run(runCtx) }()
	t.Cleanup(h.stop)
	d.WaitConnected(10 * time.Second)
	return h
}

// recordNow is the harness's job queue with the recorder on: it records
// (and compacts) at once, as a turn leaves the work owed, so what a test
// reads next is there; recaps and consolidations are left to the test.
type recordNow struct{ mem *memory.Service }

func (j recordNow) AfterTurn(ctx context.Context, t bot.TurnDone) error {
	if t.CompactionDue {
		_, err := j.mem.Compact(ctx, t.ChatID, t.Urgent)
		return err
	}
	return nil
}

func (j recordNow) Record(ctx context.Context, chatID string, _ bool) error {
	_, err := j.mem.Record(ctx, chatID)
	return err
}

func (recordNow) ChatEnded(context.Context, string) error             { return nil }
func (recordNow) MemoryChanged(context.Context, string, string) error { return nil }

// stop shuts the adapter down and dumps its log when the test failed.
func (h *harness) stop() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		h.t.Errorf("Run did not return after cancel")
	}
	if h.t.Failed() {
		h.t.Logf("adapter log:\n%s", h.logs.String())
	}
}

func (h *harness) ref(channelID string) bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformDiscord, ID: channelID, SpaceKind: bot.SpaceGuild, SpaceID: h.guild, Group: true}
}

// say posts a message of ada's in the bound channel.
func (h *harness) say(text string) string {
	return h.discord.Post(discordtest.Post{ChannelID: h.channel, Author: h.ada, Content: text})
}

// characterMessages are the messages the character posted in a channel
// (through a webhook, or as the bot with the name in bold).
func (h *harness) characterMessages(channelID string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range h.discord.Messages(channelID) {
		if (m.WebhookID != "" && m.Interaction == "" && m.Username == "Maren") || (m.AuthorID == h.discord.Bot().ID && m.Interaction == "" && strings.HasPrefix(m.Content, "**Maren**")) {
			out = append(out, m)
		}
	}
	return out
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, fmt.Sprintf(format, args...))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// userTexts are the user messages stored in a channel's current chat.
func (h *harness) userTexts(channelID string) []string {
	h.t.Helper()
	ctx := context.Background()
	ch, err := h.store.Channel(ctx, "discord:"+channelID)
	if err != nil {
		return nil
	}
	var msgs []models.Message
	if err := h.store.DB().Where("chat_id = ? AND role = ?", ch.CurrentChatID, "user").Order("id").Find(&msgs).Error; err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// replied reports whether the character's n-th message in a channel is
// complete and quotes the user's text (the fake model echoes it).
func (h *harness) replied(channelID string, n int, quote string) bool {
	msgs := h.characterMessages(channelID)
	return len(msgs) >= n && strings.Contains(msgs[n-1].Content, quote) && strings.Contains(msgs[n-1].Content, "listening")
}
