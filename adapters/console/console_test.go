package console

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
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

func TestReadLineAnyLength(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10)
	input := "short\r\n" + long + "\n" + strings.Repeat("y", 300<<10) + "\nlast without newline"
	r := bufio.NewReaderSize(strings.NewReader(input), 16)
	type got struct {
		line string
		over int
	}
	want := []got{{"short", 0}, {long, 0}, {"", 300<<10 + 1}, {"last without newline", 0}}
	for i, w := range want {
		line, over, err := readLine(r, 250<<10)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if line != w.line || over != w.over {
			t.Errorf("line %d: %d bytes, over %d; want %d bytes, over %d", i, len(line), over, len(w.line), w.over)
		}
	}
	if _, _, err := readLine(r, 250<<10); !errors.Is(err, io.EOF) {
		t.Errorf("after the last line: %v, want EOF", err)
	}
}

// session runs a console session over input on a real pipeline (SQLite, a
// 2,048-token model served by the fake API) and returns its output.
func session(t *testing.T, input string, maxLine int) (string, *models.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := models.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fake := openaitest.NewServer(t)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second}, nil)
	card, err := cards.LoadCard("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := cards.NewLibrary([]cards.Card{card}, "")
	p := bot.New(bot.Options{Store: st, Cards: lib, Model: client, Tokens: prompt.NewEstimator(), MemoryConfig: config.Default().Memory,
		Language: "en", ContextWindow: 2048, MaxReplyTokens: 256})
	var out bytes.Buffer
	s := New(p, Options{In: strings.NewReader(input), Out: &out, User: "Ada", CardID: card.ID, MaxLineBytes: maxLine})
	if err := s.Run(ctx); err != nil {
		t.Fatalf("run: %v\noutput: %.2000s", err, out.String())
	}
	return out.String(), st
}

// TestLineOverOneMebibyte: a console line over 1 MiB used to end the
// session (bufio.Scanner: token too long) and drop the lines after it
// unstored. Now the line reaches the pipeline, which refuses it as longer
// than the model's context, or, over the console's own bound, it is
// skipped with a notice; either way the next line is answered.
func TestLineOverOneMebibyte(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("The lamp swings in the wind. ", (1<<20)/28+100)
	input := "Hello there.\n" + long + "\nAfter the long line.\n"
	tests := []struct {
		name    string
		maxLine int
		notice  string
	}{
		{"refused by the pipeline", 0, "too long for this character's model"},
		{"skipped by the console", 1 << 20, "more than the console takes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, st := session(t, input, tt.maxLine)
			if !strings.Contains(out, tt.notice) {
				t.Errorf("no notice %q in output:\n%.2000s", tt.notice, out)
			}
			if !strings.Contains(out, `You said "After the long line."`) {
				t.Fatalf("the line after the long one was not answered:\n%.2000s", out)
			}
			ctx := context.Background()
			chats, err := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			if err != nil || len(chats) != 1 {
				t.Fatalf("chats: %d (%v)", len(chats), err)
			}
			br, err := st.LoadBranch(ctx, chats[0].HeadID)
			if err != nil {
				t.Fatal(err)
			}
			// greeting, two answered lines
			if len(br.Uncovered) != 5 || br.Uncovered[3].Content != "After the long line." {
				t.Errorf("branch holds %d messages, want greeting and two beats", len(br.Uncovered))
			}
		})
	}
}
