package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"troupe/config"
	"troupe/jobs"
	"troupe/models"
)

// doctorCheck is one row of troupe doctor.
type doctorCheck struct {
	name string
	run  func(context.Context, config.Config) probe
}

// doctorChecks are troupe doctor's rows, in the order printed.
var doctorChecks = []doctorCheck{
	{"database", checkDatabase},
	{"redis", checkRedis},
	{"model", func(ctx context.Context, cfg config.Config) probe { return checkChatModel(ctx, "model", cfg.Model) }},
	{"scribe", checkScribe},
	{"embeddings", func(ctx context.Context, cfg config.Config) probe { return checkEmbeddings(ctx, cfg.Recall.Embeddings) }},
	{"rerank", func(ctx context.Context, cfg config.Config) probe { return checkRerank(ctx, cfg.Recall.Rerank) }},
	{"stt", checkSTT},
	{"discord", func(ctx context.Context, cfg config.Config) probe { return checkDiscord(ctx, cfg.Discord) }},
	{"telegram", func(ctx context.Context, cfg config.Config) probe { return checkTelegram(ctx, cfg.Telegram) }},
}

// errDoctor is a doctor run with a failed check; the table said which.
var errDoctor = errors.New("doctor: a check failed")

func (c *cli) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, database, Redis, model endpoints and bot tokens, and print a table",
		Long: "Check everything troupe depends on: the configuration, the database, Redis, the model, the scribe,\n" +
			"embeddings, rerank and speech-to-text endpoints, and the Discord and Telegram tokens. A part that is not configured\n" +
			"is skipped. The exit code is 1 when any check failed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			names := []string{"config"}
			results := []probe{}
			cfg, err := c.load()
			if err != nil {
				results = append(results, failed(true, "%s", configProblem(err)))
				for _, ch := range doctorChecks {
					names = append(names, ch.name)
					results = append(results, skipped("the configuration did not load"))
				}
			} else {
				results = append(results, ok("%s", configSource(c.configPath)))
				rest := make([]probe, len(doctorChecks))
				var wg sync.WaitGroup
				for i, ch := range doctorChecks {
					names = append(names, ch.name)
					wg.Add(1)
					go func() {
						defer wg.Done()
						rest[i] = ch.run(ctx, cfg)
					}()
				}
				wg.Wait()
				results = append(results, rest...)
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
			bad := 0
			for i, r := range results {
				if r.Status == statusFailed {
					bad++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", names[i], r.Status, strings.ReplaceAll(r.Detail, "\n", "; "))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if bad > 0 {
				return fmt.Errorf("%w (%d of %d)", errDoctor, bad, len(results))
			}
			return nil
		},
	}
}

// configProblem is a configuration error in one line per problem.
func configProblem(err error) string {
	var es config.Errors
	var e *config.Error
	switch {
	case errors.As(err, &es):
		parts := make([]string, len(es))
		for i, x := range es {
			parts[i] = x.Key + ": " + x.Problem
		}
		return strings.Join(parts, "; ")
	case errors.As(err, &e):
		return e.Key + ": " + e.Problem
	}
	return err.Error()
}

func configSource(path string) string {
	if path == "" {
		return "defaults, " + config.DefaultFile + " if present, and TROUPE_* variables"
	}
	return path + " and TROUPE_* variables"
}

// checkDatabase connects to the database (without migrating it) and
// pings it.
func checkDatabase(ctx context.Context, cfg config.Config) probe {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	st, err := models.Connect(cfg.Database.DSN.Value(), nil)
	if err != nil {
		return failed(true, "%v", err)
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		return failed(true, "%s: %v", st.Dialect(), err)
	}
	return ok("%s reachable", st.Dialect())
}

// checkRedis pings Redis; without redis.url the in-process one is used.
func checkRedis(ctx context.Context, cfg config.Config) probe {
	if cfg.Redis.URL == "" {
		return ok("in-process (redis.url is empty: one process only)")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	r, err := jobs.OpenRedis(ctx, cfg.Redis.URL.Value())
	if err != nil {
		return failed(true, "%v", err)
	}
	defer r.Close()
	return ok("reachable")
}
