//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"troupe/fakes/openaitest"
)

// plainLabel finds a speaker's name printed as "Name: " at a line's start
// (a reply may quote one inside its text).
var plainLabel = regexp.MustCompile(`(?m)^(Maren|苏砚): `)

// openPTY opens a pseudo-terminal pair: the test reads and writes the
// controller, the command gets the terminal.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	controller = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		controller.Close()
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		controller.Close()
		t.Fatalf("pty number: %v", err)
	}
	terminal, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		controller.Close()
		t.Fatalf("open terminal: %v", err)
	}
	t.Cleanup(func() { controller.Close(); terminal.Close() })
	return controller, terminal
}

// TestChatSceneBoldOnTerminal runs the built `troupe chat --card A --card
// B` on a pseudo-terminal against the fake model: each speaker's name is
// printed bold (ANSI) before its greeting and its reply. With the same
// terminal on stdin but stdout a pipe, the names come as "Name: " and no
// escape sequence is written.
func TestChatSceneBoldOnTerminal(t *testing.T) {
	bin := troupeBinary(t)
	bold := func(name string) string { return "\x1b[1m" + name + "\x1b[0m " }
	tests := []struct {
		name string
		// pipeOut gives the command a pipe as stdout.
		pipeOut bool
		want    []string
	}{
		{"terminal", false, []string{bold("Maren") + "*The kettle", bold("苏砚") + "*檐下", bold("Maren") + "reply 1: ", bold("苏砚") + "reply 2: "}},
		{"stdout piped", true, []string{"Maren: *The kettle", "苏砚: *檐下", "Maren: reply 1: ", "苏砚: reply 2: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			controller, terminal := openPTY(t)
			cmd := exec.CommandContext(ctx, bin, "chat", "--card", "../../examples/cards/lantern-keeper.json", "--card", "../../examples/cards/tea-house.json",
				"--user", "Ada", "--drain-timeout", "5s")
			cmd.Env = append(os.Environ(), "TROUPE_DATABASE_DSN=sqlite://"+filepath.Join(t.TempDir(), "troupe.db"),
				"TROUPE_MODEL_BASE_URL="+fake.URL(), "TROUPE_CARDS_DIR="+t.TempDir(), "TROUPE_LOG_LEVEL=warn")
			var errOut, piped bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, terminal, &errOut
			if tt.pipeOut {
				cmd.Stdout = &piped
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			terminal.Close()
			// The terminal's output, read until the command has closed it
			// (the controller then reads EIO).
			var onTTY bytes.Buffer
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(&onTTY, controller)
			}()
			// One line mentioning both, then end of input (^D at a line's
			// start).
			if _, err := controller.WriteString("@Maren @苏砚 Who lives here?\n\x04"); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("chat: %v\nstderr: %s", err, errOut.String())
			}
			wg.Wait()
			got := onTTY.String()
			if tt.pipeOut {
				got = piped.String()
			}
			t.Logf("output:\n%q", got)
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("output lacks %q after offset %d:\n%q", w, at, got)
				}
				at += i + len(w)
			}
			if tt.pipeOut && strings.Contains(got, "\x1b[") {
				t.Errorf("piped stdout has ANSI escapes:\n%q", got)
			}
			if !tt.pipeOut && plainLabel.MatchString(got) {
				t.Errorf("the terminal shows a plain \"Name: \" label:\n%q", got)
			}
		})
	}
}
