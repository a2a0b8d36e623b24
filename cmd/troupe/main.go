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
	"runtime/debug"
	"syscall"

	"troupe/config"
)

// version may be set at build time with -ldflags "-X main.version=…";
// otherwise buildVersion reads the build info.
var version = ""

// buildVersion is the version set at build time, else the module version
// `go install troupe@v…` records, else the VCS revision `go build` in a
// checkout records (with "+dirty" for uncommitted changes), else "unknown".
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown (built without version control information)"
	}
	out := rev[:min(12, len(rev))]
	if dirty {
		out += "+dirty"
	}
	if at != "" {
		out += " (" + at + ")"
	}
	return out
}

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
