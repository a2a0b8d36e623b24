package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"troupe/adapters/console"
	"troupe/cards"
	"troupe/jobs"
)

func (c *cli) chatCmd() *cobra.Command {
	var (
		cardPaths    []string
		lorePaths    []string
		user         string
		noWorker     bool
		drainTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Roleplay with a character in the terminal",
		Long: "Roleplay with a character in the terminal. With a terminal on stdin it streams replies;\n" +
			"otherwise it reads one message per line and prints each reply, so scripts can drive it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			interactive := isTerminal(c.stdin)
			logCfg := cfg.Log
			if interactive && logCfg.Level == "info" {
				// Keep the conversation readable; warnings still show.
				logCfg.Level = "warn"
			}
			log := newLogger(logCfg, c.stderr)
			lib, err := cards.LoadLibrary(cfg.Cards.Dir, "")
			if err != nil {
				lib, _ = cards.NewLibrary(nil, "")
			}
			logCardFailures(log, lib)
			var card cards.Card
			var cast []string
			switch {
			case len(cardPaths) > 0:
				for _, path := range cardPaths {
					// A file of the card folder plays under its id there;
					// another file with a stem the folder has gets its own.
					c, err := lib.AddFile(path)
					if err != nil {
						return usageError{fmt.Errorf("--card: %w", err)}
					}
					cast = append(cast, c.ID)
				}
				if len(cast) > cfg.Scene.MaxCast {
					return usageError{fmt.Errorf("--card: %d cards are more than scene.max_cast (%d)", len(cast), cfg.Scene.MaxCast)}
				}
				card, _ = lib.Get(cast[0])
			case cfg.Cards.Default != "":
				var ok bool
				if card, ok = lib.Find(cfg.Cards.Default); !ok {
					return usageError{fmt.Errorf("cards.default %q is not in %s", cfg.Cards.Default, cfg.Cards.Dir)}
				}
			default:
				return usageError{fmt.Errorf("chat needs --card FILE (for example examples/cards/lantern-keeper.json)")}
			}
			var lore []*cards.Book
			for _, p := range lorePaths {
				b, err := cards.ReadBookFile(p)
				if err != nil {
					return usageError{fmt.Errorf("--lore: %w", err)}
				}
				lore = append(lore, b)
			}
			if err := preflight(ctx, cfg, log, false); err != nil {
				return err
			}
			a, err := openAppWith(ctx, cfg, log, lib, lore)
			if err != nil {
				return err
			}
			defer a.Close()
			g, gctx := errgroup.WithContext(ctx)
			workerCtx, stopWorker := context.WithCancel(gctx)
			defer stopWorker()
			var swept <-chan struct{}
			var w *jobs.Worker
			if !noWorker {
				// Ctrl-C while the end drains leaves running jobs at once.
				w = a.workerWith(time.Second)
				swept = w.Swept()
				g.Go(func() error { return w.Run(workerCtx) })
			}
			session := console.New(a.pipeline, console.Options{In: c.stdin, Out: c.stdout, User: user, CardID: card.ID, Cast: cast,
				Interactive: interactive, Bold: isTerminal(c.stdout)})
			g.Go(func() error {
				defer stopWorker()
				if err := session.Run(gctx); err != nil {
					return err
				}
				if noWorker {
					return nil
				}
				// The worker's first sweep enqueues what was owed before this
				// session (a hand edit's consolidation): drain after it.
				select {
				case <-swept:
				case <-gctx.Done():
				}
				// The input has ended, so no later line will make the last
				// turns owed: ask the sweeper now for what they owe (the
				// recorder's last turn among them), whether its first sweep
				// came before the turns or after.
				if _, err := w.Sweep(gctx); err != nil && gctx.Err() == nil {
					log.Warn("sweep at the end of the chat", "err", err)
				}
				c.drain(gctx, a, drainTimeout, log)
				return nil
			})
			return g.Wait()
		},
	}
	cmd.Flags().StringArrayVar(&cardPaths, "card", nil, "card file (Tavern V1/V2/V3 JSON, PNG or CHARX); repeat it to play a scene of several characters")
	cmd.Flags().StringArrayVar(&lorePaths, "lore", nil, "world-info or lorebook file to attach to this chat (repeatable)")
	cmd.Flags().StringVar(&user, "user", defaultUser(), "your name in the story")
	cmd.Flags().BoolVar(&noWorker, "no-worker", false, "don't run the memory job workers in this process")
	cmd.Flags().DurationVar(&drainTimeout, "drain-timeout", 2*time.Minute, "how long to wait at the end for memory jobs")
	return cmd
}

func defaultUser() string {
	if u := os.Getenv("USER"); u != "" && u != "root" {
		return u
	}
	return "Traveler"
}

func isTerminal(r any) bool {
	if s, ok := r.(*syncWriter); ok {
		r = s.w
	}
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// drainEvery is how often the end of a chat says what it is still
// finishing.
var drainEvery = 10 * time.Second

// drain finishes the memory work the session left owed, up to timeout,
// saying on stderr what it is finishing, how long it has waited and that
// Ctrl-C leaves the rest owed: the sweeper of the next start finds it, so
// nothing is lost.
func (c *cli) drain(ctx context.Context, a *app, timeout time.Duration, log *slog.Logger) {
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- a.queue.Drain(ctx, timeout) }()
	// The first word comes as soon as there is owed work to name: a job
	// the last turn enqueues may land a moment after the input ends.
	poll := time.NewTicker(drainPoll)
	defer poll.Stop()
	var said time.Time
	for {
		select {
		case err := <-done:
			switch {
			case err == nil && !said.IsZero():
				fmt.Fprintf(c.stderr, "[troupe] memory work finished (%.0fs).\n", time.Since(start).Seconds())
			case err == nil:
			case ctx.Err() != nil:
				fmt.Fprintln(c.stderr, "[troupe] left the memory work owed: it runs on the next start.")
			default:
				log.Warn("memory jobs not finished", "err", err)
				fmt.Fprintf(c.stderr, "[troupe] memory work not finished after %s: left owed, it runs on the next start.\n", timeout)
			}
			return
		case <-poll.C:
			if !said.IsZero() && time.Since(said) < drainEvery {
				continue
			}
			owed, err := a.queue.Owed()
			if err != nil || len(owed) == 0 {
				continue
			}
			if said.IsZero() {
				fmt.Fprintf(c.stderr, "[troupe] finishing the memory work of this chat (%s), up to %s. Ctrl-C leaves it owed: nothing is lost, it runs on the next start.\n", describeOwed(owed), timeout)
			} else {
				fmt.Fprintf(c.stderr, "[troupe] still finishing %s (%.0fs; Ctrl-C leaves it owed)\n", describeOwed(owed), time.Since(start).Seconds())
			}
			said = time.Now()
		}
	}
}

// drainPoll is how often the end of a chat looks for owed work to name
// before it has named any.
const drainPoll = 250 * time.Millisecond

// describeOwed names the owed jobs by kind: "2 compact, 1 record".
func describeOwed(owed map[string]int) string {
	kinds := make([]string, 0, len(owed))
	for k := range owed {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", owed[k], k)
	}
	return strings.Join(parts, ", ")
}
