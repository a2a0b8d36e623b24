package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"troupe/config"
)

// env is how the CLI reads the environment (os.LookupEnv, or a map in tests).
type env func(string) (string, bool)

// cli holds what every subcommand shares.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         env
	configPath     string
}

// run executes one troupe command line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup env) error {
	// The console, the log and the memory jobs' goroutines all write to
	// stdout and stderr; each line goes out whole.
	c := &cli{stdin: stdin, stdout: &syncWriter{w: stdout}, stderr: &syncWriter{w: stderr}, lookup: lookup}
	root := c.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && cmd != nil && isUsage(err) {
		return usageError{err}
	}
	return err
}

// root builds the command tree.
func (c *cli) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "troupe",
		Short:         "LLM characters for Discord, Telegram and the terminal, with memory",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&c.configPath, "config", "", "config file (default troupe.yaml if present)")
	root.AddCommand(c.serveCmd(), c.workerCmd(), c.chatCmd(), c.migrateCmd(), c.versionCmd(), c.memoryCmd(), c.healthCmd(), c.benchCmd(), c.cardCmd(), c.evalCmd(), c.doctorCmd(), c.webCmd())
	return root
}

func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "required flag", "accepts ", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// load reads and validates the configuration.
func (c *cli) load() (config.Config, error) {
	return config.Load(c.configPath, c.lookup)
}

func (c *cli) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print troupe's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(c.stdout, "troupe %s\n", buildVersion())
			return err
		},
	}
}

func (c *cli) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the database schema",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			log := newLogger(cfg.Log, c.stderr)
			st, err := openStore(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			defer st.Close()
			_, err = fmt.Fprintf(c.stdout, "migrated %s database\n", st.Dialect())
			return err
		},
	}
}

func (c *cli) serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the chat adapters and the job workers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			log := newLogger(cfg.Log, c.stderr)
			if err := preflight(cmd.Context(), cfg, log, true); err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, log, serveAll)
		},
	}
}

func (c *cli) workerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Run the job workers only",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, newLogger(cfg.Log, c.stderr), serveWorkers)
		},
	}
}

// shutdownTimeout bounds how long in-flight replies may take after a stop.
const shutdownTimeout = 30 * time.Second

// syncWriter serializes the writes of many goroutines (and of the several
// loggers a command builds) to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
