package bot_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/media"
	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// outRig is a pipeline over the fake OpenAI server with, as asked, its
// speech endpoint (tts) and its image endpoint (image) configured.
type outRig struct {
	st   *models.Store
	fake *openaitest.Server
	p    *bot.Pipeline
	opt  bot.Options
}

// newOutRig builds a outRig on dsn whose card (the lantern keeper)
// edit may change first.
func newOutRig(t *testing.T, dsn string, tts, image bool, edit func(*cards.Card)) *outRig {
	t.Helper()
	card, err := cards.LoadCard("../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&card)
	}
	return newOutRigOf(t, dsn, tts, image, card)
}

// newOutRigOf is a outRig whose library holds cs.
func newOutRigOf(t *testing.T, dsn string, tts, image bool, cs ...cards.Card) *outRig {
	t.Helper()
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fake := openaitest.NewServer(t)
	scribe := &memorytest.Scribe{}
	fake.SetResponder(scribe.Respond)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	mc := config.Default().Memory
	mem := memory.NewService(st, llm.Scribe{C: client}, memory.ConfigFrom(mc, "en"), slog.New(slog.DiscardHandler))
	lib, _ := cards.NewLibrary(cs, "")
	opt := bot.Options{Store: st, Cards: lib, Model: client, Jobs: inlineJobs{mem}, Memory: mem, Tokens: prompt.NewEstimator(),
		MemoryConfig: mc, Language: "en", ContextWindow: 128000, MaxReplyTokens: 256, Voice: "alloy"}
	if tts {
		opt.Voicer = llm.New(llm.Config{BaseURL: fake.URL(), Model: "tts-1", MaxRetries: -1, Timeout: 5 * time.Second, SpeechFormat: "opus"}, nil)
	}
	if image {
		opt.Painter = llm.New(llm.Config{BaseURL: fake.URL(), Model: "dall-e-3", MaxRetries: -1, Timeout: 5 * time.Second, ImageSize: "64x64"}, nil)
	}
	r := &outRig{st: st, fake: fake, opt: opt, p: bot.New(opt)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.p.Close(ctx)
	})
	return r
}

// withVoices sets the card's extensions.troupe.voice and extensions.voice
// ("" leaves one out).
func withVoices(troupe, plain string) func(*cards.Card) {
	return func(c *cards.Card) {
		var data map[string]any
		if err := json.Unmarshal(c.Raw, &data); err != nil {
			panic(err)
		}
		ext, _ := data["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
		}
		tr, _ := ext["troupe"].(map[string]any)
		if tr == nil {
			tr = map[string]any{}
		}
		if troupe != "" {
			tr["voice"] = troupe
		}
		if plain != "" {
			ext["voice"] = plain
		}
		ext["troupe"], data["extensions"] = tr, ext
		raw, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		c.Raw = raw
	}
}

// sinkEvent is one thing a fileSink was given: a reply, a notice, a
// refusal or a file.
type sinkEvent struct {
	kind string
	text string
	file media.File
}

// fileSink records, in order, what the pipeline writes to it, files
// included.
type fileSink struct {
	mu     sync.Mutex
	events []sinkEvent
}

var (
	_ bot.FileSender = (*fileSink)(nil)
	_ bot.Refusing   = (*fileSink)(nil)
)

func (*fileSink) Typing(context.Context)               {}
func (*fileSink) Update(context.Context, string) error { return nil }

func (s *fileSink) Finish(_ context.Context, text string) error {
	s.add(sinkEvent{kind: "reply", text: text})
	return nil
}

func (s *fileSink) Notice(_ context.Context, text string) error {
	s.add(sinkEvent{kind: "notice", text: text})
	return nil
}

func (s *fileSink) Refuse(_ context.Context, text string) error {
	s.add(sinkEvent{kind: "refusal", text: text})
	return nil
}

func (s *fileSink) SendFile(_ context.Context, f media.File) error {
	s.add(sinkEvent{kind: "file", file: f})
	return nil
}

func (s *fileSink) add(e sinkEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

// all returns what the sink got so far.
func (s *fileSink) all() []sinkEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkEvent(nil), s.events...)
}

// of returns the events of kind.
func (s *fileSink) of(kind string) []sinkEvent {
	var out []sinkEvent
	for _, e := range s.all() {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits until the sink holds n events of kind.
func (s *fileSink) waitFor(t *testing.T, kind string, n int) []sinkEvent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got := s.of(kind); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d %s events; the sink holds %+v", n, kind, s.all())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kinds lists the kinds of the sink's events in order.
func (s *fileSink) kinds() string {
	var k []string
	for _, e := range s.all() {
		k = append(k, e.kind)
	}
	return strings.Join(k, ",")
}

// execIn runs a command as in's author and returns what the sink got.
func execIn(t *testing.T, p *bot.Pipeline, in bot.Inbound, name, args string) *fileSink {
	t.Helper()
	s := &fileSink{}
	if err := p.Exec(context.Background(), in, bot.Command{Name: name, Args: args}, s); err != nil {
		t.Fatalf("/%s %s: %v", name, args, err)
	}
	return s
}

// noticeText joins the notices and refusals of a sink.
func noticeText(s *fileSink) string {
	var out []string
	for _, e := range s.all() {
		if e.kind == "notice" || e.kind == "refusal" {
			out = append(out, e.text)
		}
	}
	return strings.Join(out, "\n")
}
