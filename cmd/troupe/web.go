package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/spf13/cobra"

	"troupe/config"
	"troupe/web"
)

// webCmd serves the inspector over the configured database without the chat
// adapters: for looking at a bot that runs elsewhere, or at a database no
// bot serves. It runs the job workers too, so the consolidation an edit or
// a forget owes is done here when no other process does it.
func (c *cli) webCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "web",
		Short: "Serve the web inspector (and the job workers) without the chat adapters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			if !cfg.Web.On() {
				return &config.Error{Key: "web.token", Problem: "the inspector is off: set web.token (or TROUPE_WEB_TOKEN) to a secret of at least 16 characters"}
			}
			return serve(cmd.Context(), cfg, newLogger(cfg.Log, c.stderr), serveInspector)
		},
	}
}

// serveMode is what a serving process runs besides the job workers.
type serveMode int

const (
	// serveAll: the chat adapters, and the inspector when it is on.
	serveAll serveMode = iota
	// serveWorkers: the workers alone (troupe worker), and the inspector
	// when it is on.
	serveWorkers
	// serveInspector: the inspector, which must start (troupe web).
	serveInspector
)

// runInspector serves the inspector on web.listen until ctx ends, when the
// configuration turns it on. Only `troupe web` fails when the address is
// taken; serve and worker go on without it, as with ops.listen, so two
// processes on one machine can share a configuration.
func runInspector(ctx context.Context, cfg config.Config, a *app, log *slog.Logger, mode serveMode) error {
	if !cfg.Web.On() {
		return nil
	}
	s, err := web.New(web.Options{Store: a.store, Memory: a.memory, Queue: a.queue, Cards: a.cards, CardsDir: cfg.Cards.Dir, WorldsDir: cfg.Cards.WorldsDir,
		Token: cfg.Web.Token.Value(), ReadOnlyToken: cfg.Web.ReadOnlyToken.Value(), Log: log.With("component", "web")})
	if errors.Is(err, web.ErrOff) {
		return nil
	}
	if err != nil {
		return err
	}
	err = s.Run(ctx, cfg.Web.Listen)
	if err != nil && mode != serveInspector {
		log.Warn("web inspector not available; set web.listen to a free address", "addr", cfg.Web.Listen, "err", err)
		return nil
	}
	return err
}
