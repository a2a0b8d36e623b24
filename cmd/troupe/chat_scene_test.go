package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/models"
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

// TestChatConsoleSceneResume: a second `troupe chat --card A --card B`
// on the same store resumes the scene: no new chat, no second round of
// group greetings, and the last reply shown once, under its speaker.
// The control: the cards the other way round are another cast (and
// channel), whose session opens greeted.
func TestChatConsoleSceneResume(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			maren, suyan := "../../examples/cards/lantern-keeper.json", "../../examples/cards/tea-house.json"
			chat := func(input string, cards ...string) string {
				t.Helper()
				args := []string{"chat", "--user", "Ada", "--drain-timeout", "5s"}
				for _, c := range cards {
					args = append(args, "--card", c)
				}
				var out, errOut bytes.Buffer
				if err := run(ctx, args, strings.NewReader(input), &out, &errOut, testEnv(vals)); err != nil {
					t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
				}
				return out.String()
			}
			greetings := []string{"Maren: *The kettle", "苏砚: *檐下"}
			first := chat("@苏砚 Who lives here?\n", maren, suyan)
			for _, g := range greetings {
				if strings.Count(first, g) != 1 {
					t.Fatalf("the first session shows %q %d times, want once:\n%s", g, strings.Count(first, g), first)
				}
			}
			if !strings.Contains(first, "苏砚: reply 1: ") {
				t.Fatalf("the first session lacks 苏砚's reply:\n%s", first)
			}
			again := chat("", maren, suyan)
			for _, g := range greetings {
				if strings.Contains(again, g) {
					t.Errorf("the resumed session greets again (%q):\n%s", g, again)
				}
			}
			if strings.Count(again, "苏砚: reply 1: ") != 1 {
				t.Errorf("the resumed session does not show the last reply once under its speaker:\n%s", again)
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			key := "console:" + bot.StableID("Ada/lantern-keeper+tea-house")
			if chats, err := st.ChannelChats(ctx, key); err != nil || len(chats) != 1 {
				t.Fatalf("chats of %s = %d (%v), want 1", key, len(chats), err)
			}
			// The control: the greetings are seen when a scene opens.
			other := chat("", suyan, maren)
			for _, g := range greetings {
				if !strings.Contains(other, g) {
					t.Errorf("a session of another cast lacks the greeting %q:\n%s", g, other)
				}
			}
		})
	}
}

// TestChatConsoleCastAddNamesSpeakers: a console chat begun with one card
// and grown into a scene with /cast add prints every scene reply under its
// speaker's name.
func TestChatConsoleCastAddNamesSpeakers(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			dir := t.TempDir()
			copyFile(t, "../../examples/cards/tea-house.json", filepath.Join(dir, "tea-house.json"))
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = dir
			vals["TROUPE_LOG_LEVEL"] = "warn"
			in := strings.NewReader("/cast add tea-house\n@Maren @苏砚 Who lives here?\n")
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "5s"}, in, &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			got := out.String()
			t.Logf("console output:\n%s", got)
			at := strings.Index(got, "joins the scene")
			if at < 0 {
				t.Fatalf("/cast add did not grow the scene:\n%s", got)
			}
			for _, w := range []string{"Maren: reply ", "苏砚: reply "} {
				if !strings.Contains(got[at:], w) {
					t.Errorf("after /cast add the output lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
