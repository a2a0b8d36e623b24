package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"troupe/adapters/console"
	"troupe/cards"
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
			if !noWorker {
				w := a.worker()
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
				if err := a.queue.Drain(gctx, drainTimeout); err != nil {
					log.Warn("memory jobs not finished", "err", err)
				}
				return nil
			})
			return g.Wait()
		},
	}
	cmd.Flags().StringArrayVar(&cardPaths, "card", nil, "card file (Tavern V2 JSON); repeat it to play a scene of several characters")
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
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
