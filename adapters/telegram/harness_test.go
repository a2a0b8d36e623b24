package telegram

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/cards"
	"troupe/models/testenv"

	"troupe/adapters/telegram/telegramtest"
	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
)

var (
	alice = telegramtest.User{ID: 1001, FirstName: "Alice", UserName: "alice", LanguageCode: "en"}
	bob   = telegramtest.User{ID: 1002, FirstName: "Bob", UserName: "bob", LanguageCode: "en"}
)

// harness runs the adapter against a fake Bot API, a fake model and a
// SQLite store. start may be called again after stop: a restart on the same
// store, with a new pipeline and adapter.
type harness struct {
	t     *testing.T
	tg    *telegramtest.Server
	ai    *openaitest.Server
	store *models.Store
	lib   *cards.Library
	cfg   config.Telegram
	// tune adjusts each new adapter before it runs.
	tune func(*Adapter)
	// limits and now configure the pipeline's per-user limits.
	limits bot.Limits
	now    func() time.Time
	// recorder turns the recorder on: turns store their plain events,
	// which a test records and reflects on through h.mem.
	recorder bool
	// observer, when set, is the pipeline's; wrap, when set, stands
	// between the adapter and the pipeline.
	observer bot.Observer
	wrap     func(bot.Engine) bot.Engine
	// options, when set, adjusts the pipeline's options (media
	// endpoints, vision) before it is built.
	options func(*bot.Options)

	a      *Adapter
	p      *bot.Pipeline
	mem    *memory.Service
	cancel context.CancelFunc
	done   chan error
	logs   *testenv.Buffer
}

func newHarness(t *testing.T, ids ...string) *harness {
	t.Helper()
	return newHarnessOn(t, "", ids...)
}

// newHarnessOn is newHarness on the database dsn ("" for a fresh SQLite
// file).
func newHarnessOn(t *testing.T, dsn string, ids ...string) *harness {
	t.Helper()
	ctx := context.Background()
	if dsn == "" {
		dsn = "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	}
	st, err := models.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if len(ids) == 0 {
		ids = []string{"lantern-keeper"}
	}
	var cs []cards.Card
	for _, name := range ids {
		c, err := cards.LoadCard(filepath.Join("..", "..", "examples", "cards", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	lib, err := cards.NewLibrary(cs, "")
	if err != nil {
		t.Fatal(err)
	}
	tg := telegramtest.NewServer(t)
	cfg := config.Default().Telegram
	cfg.Token = config.Secret(tg.Token())
	cfg.APIEndpoint = tg.Endpoint()
	h := &harness{t: t, tg: tg, ai: openaitest.NewServer(t), store: st, lib: lib, cfg: cfg, logs: &testenv.Buffer{}}
	t.Cleanup(h.stop)
	return h
}

// start runs a new pipeline and adapter and waits until the commands are
// published.
func (h *harness) start() {
	h.t.Helper()
	model := llm.New(llm.Config{BaseURL: h.ai.URL(), Model: "m"}, nil)
	m := config.Default().Memory
	mem := memory.NewService(h.store, llm.Scribe{C: model}, memory.Config{
		Compact:          memory.CompactParams{Keep: m.Keep, Period: m.Period, MinCutChars: m.MinCutChars, ManualMinCutChars: m.ManualMinCutChars},
		ResidentMaxChars: m.ResidentMaxChars, EnvelopeChars: m.EnvelopeChars, MinUsefulChars: m.MinUsefulChars,
		RecapMaxChars: m.RecapMaxChars, Language: "en",
	}, nil)
	h.mem = mem
	opt := bot.Options{Store: h.store, Cards: h.lib, Model: model, Memory: mem, MemoryConfig: m, Language: "en", Limits: h.limits, Now: h.now}
	if h.recorder {
		opt.Recorder = config.Recorder{Enabled: true, Batch: 100}
	}
	opt.Observer = h.observer
	if h.options != nil {
		h.options(&opt)
	}
	h.p = bot.New(opt)
	var engine bot.Engine = h.p
	if h.wrap != nil {
		engine = h.wrap(h.p)
	}
	a, err := New(h.cfg, engine, slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		h.t.Fatal(err)
	}
	a.drainTimeout = 5 * time.Second
	if h.tune != nil {
		h.tune(a)
	}
	published := len(h.tg.Calls("setMyCommands"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	h.a, h.cancel, h.done = a, cancel, done
	waitFor(h.t, "commands published", func() bool { return len(h.tg.Calls("setMyCommands")) > published })
}

// stop cancels Run and waits for it to return.
func (h *harness) stop() {
	h.t.Helper()
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Fatal("Run did not return after cancel")
	}
	h.cancel = nil
	if strings.Contains(h.logs.String(), h.tg.Token()) {
		h.t.Error("the bot token reached the log")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.p.Close(ctx); err != nil {
		h.t.Errorf("pipeline close: %v", err)
	}
}

// texts returns the visible texts of the bot's messages in a chat.
func (h *harness) texts(chatID int64) []string {
	var out []string
	for _, m := range h.tg.Messages(chatID) {
		out = append(out, m.Text)
	}
	return out
}

// waitText waits until a bot message in the chat contains sub and returns
// it.
func (h *harness) waitText(chatID int64, sub string) telegramtest.Message {
	h.t.Helper()
	var got telegramtest.Message
	waitFor(h.t, "a message containing "+sub, func() bool {
		for _, m := range h.tg.Messages(chatID) {
			if strings.Contains(m.Text, sub) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// count returns how many bot messages in the chat contain sub.
func (h *harness) count(chatID int64, sub string) int {
	n := 0
	for _, t := range h.texts(chatID) {
		if strings.Contains(t, sub) {
			n++
		}
	}
	return n
}

// chatCalls returns the calls of method made for a chat.
func (h *harness) chatCalls(method string, chatID int64) []telegramtest.Call {
	var out []telegramtest.Call
	for _, c := range h.tg.Calls(method) {
		if c.Params.Get("chat_id") == itoa(chatID) {
			out = append(out, c)
		}
	}
	return out
}

// inboxState reads the saved polling state.
func (h *harness) inboxState() inboxState {
	h.t.Helper()
	raw, err := h.store.Setting(context.Background(), offsetKey(h.tg.Bot().ID))
	if err != nil {
		h.t.Fatalf("read offset: %v", err)
	}
	var st inboxState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		h.t.Fatal(err)
	}
	return st
}

// messages returns the stored messages of the channel's chats, oldest first.
func (h *harness) messages(chatID int64) []models.Message {
	h.t.Helper()
	var chats []models.Chat
	if err := h.store.DB().Where("channel_id = ?", "telegram:"+itoa(chatID)).Find(&chats).Error; err != nil {
		h.t.Fatal(err)
	}
	var ids []string
	for _, c := range chats {
		ids = append(ids, c.ID)
	}
	var msgs []models.Message
	if err := h.store.DB().Where("chat_id IN ?", ids).Order("id").Find(&msgs).Error; err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// holdWhen makes the model's answer to a message containing marker wait
// until release is called (at the latest when the test ends).
func (h *harness) holdWhen(marker string) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	h.t.Cleanup(release)
	h.ai.SetResponder(func(req openaitest.Request) openaitest.Answer {
		if last := memorytest.LastUser(req); strings.Contains(last, marker) {
			<-gate
		}
		return openaitest.DefaultResponder(req)
	})
	return release
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
