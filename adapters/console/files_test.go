package console

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/models"
	"troupe/prompt"
)

// /picture in the console: the picture is not shown, but one line says who
// sent which file, how large, and its caption; the session goes on.
func TestConsoleSaysAFileCame(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := models.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fake := openaitest.NewServer(t)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	painter := llm.New(llm.Config{BaseURL: fake.URL(), Model: "dall-e-3", MaxRetries: -1, Timeout: 5 * time.Second, ImageSize: "64x64"}, nil)
	card, err := cards.LoadCard("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := cards.NewLibrary([]cards.Card{card}, "")
	p := bot.New(bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(), MemoryConfig: config.Default().Memory,
		Language: "en", ContextWindow: 8192, MaxReplyTokens: 256, Painter: painter})
	var out bytes.Buffer
	s := New(p, Options{In: strings.NewReader("Hello there.\n/picture a gull on the rail\nAnd now?\n"), Out: &out, User: "Ada", CardID: card.ID})
	if err := s.Run(ctx); err != nil {
		t.Fatalf("run: %v\noutput: %s", err, out.String())
	}
	line := regexp.MustCompile(`(?m)^\[Maren sent picture\.png, [0-9]+ (bytes|KB): a gull on the rail\]$`)
	if !line.MatchString(out.String()) {
		t.Errorf("no line saying Maren sent the picture:\n%s", out.String())
	}
	if n := len(fake.RequestsTo(openaitest.ImagesPath)); n != 1 {
		t.Errorf("%d image requests, want 1", n)
	}
	if !strings.Contains(out.String(), "And now?") {
		t.Errorf("the session did not go on after the picture:\n%s", out.String())
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want string
	}{{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1 KB"}, {12 * 1024, "12 KB"}, {3 << 20, "3.0 MB"}}
	for _, tt := range tests {
		if got := size(tt.n); got != tt.want {
			t.Errorf("size(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
