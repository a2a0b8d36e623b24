// Command troupe plays LLM characters in Discord channels, Telegram chats and
// the terminal, and remembers their stories.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"troupe/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err and maps it to the process's exit code: 2 for a bad
// configuration or usage, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var cerrs config.Errors
	var cerr *config.Error
	var uerr usageError
	switch {
	case errors.As(err, &cerrs):
		fmt.Fprintf(stderr, "troupe: invalid configuration (%d problems):\n", len(cerrs))
		for _, e := range cerrs {
			fmt.Fprintf(stderr, "  %s: %s\n", e.Key, e.Problem)
		}
		return 2
	case errors.As(err, &cerr):
		fmt.Fprintf(stderr, "troupe: invalid configuration: %s: %s\n", cerr.Key, cerr.Problem)
		return 2
	case errors.As(err, &uerr):
		fmt.Fprintf(stderr, "troupe: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "troupe: %v\n", err)
	return 1
}

// usageError is a wrong command line.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }
