package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"troupe/llm/openaitest"
)

// TestChatConsoleScene: `troupe chat --card A --card B`, piped, opens a
// scene with both greetings and prints each reply under its speaker's
// name, two replies for two mentions, in order.
func TestChatConsoleScene(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			in := strings.NewReader("@Maren @苏砚 Who lives here?\n/cast\n")
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--card", "../../examples/cards/tea-house.json",
				"--user", "Ada", "--drain-timeout", "5s"}, in, &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			got := out.String()
			t.Logf("console output:\n%s", got)
			if strings.Contains(got, "\x1b[") {
				t.Errorf("piped output has ANSI escapes:\n%q", got)
			}
			// Both greetings, then Maren's reply and 苏砚's, each named.
			want := []string{"Maren: *The kettle", "苏砚: *檐下", "Maren: reply 1: ", "苏砚: reply 2: You said \"Maren: reply 1", "Maren (lantern-keeper)", "苏砚 (tea-house)"}
			at := 0
			for _, w := range want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("output lacks %q after offset %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
		})
	}
}
