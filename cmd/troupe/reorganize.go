package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"troupe/memory"
	"troupe/models"
)

func (c *cli) memoryReorganizeCmd() *cobra.Command {
	var card, space string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "reorganize",
		Short: "Tidy a card's memory in a space now (every pair without --card and --space) and print what changed",
		Long: "Merges duplicate handbook entries and beliefs (keeping every chat that supports them), drops entries no live chat\n" +
			"supports, brings the handbook and each character's beliefs under their budgets, retires beliefs whose evidence is\n" +
			"gone or faded, folds faded perceptions to their gist and drops orphaned index terms and vectors. A person's lines\n" +
			"and each chat's own block are never changed. With --dry-run nothing is written.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (card == "") != (space == "") {
				return usageError{errors.New("memory reorganize: give both --card and --space, or neither")}
			}
			return c.withMemory(cmd, func(a *app) error {
				ctx := cmd.Context()
				all, err := a.store.MemoryKeys(ctx)
				if err != nil {
					return err
				}
				keys := all
				if card != "" {
					if err := checkMemoryKey(all, card, space); err != nil {
						return err
					}
					keys = []models.MemoryKey{{CardID: card, SpaceID: space}}
				}
				var failed error
				for _, k := range keys {
					rep, err := a.memory.ReorganizeNow(ctx, k.CardID, k.SpaceID, dryRun)
					if err != nil {
						fmt.Fprintf(c.stdout, "== %s / %s ==\nfailed: %s (nothing was changed; it stays owed)\n", k.CardID, k.SpaceID, memory.FaultOf(err))
						failed = errors.Join(failed, fmt.Errorf("memory reorganize %s/%s: %w", k.CardID, k.SpaceID, err))
						continue
					}
					writeReorganize(c, k, rep, dryRun)
				}
				return failed
			})
		},
	}
	cmd.Flags().StringVar(&card, "card", "", "card id")
	cmd.Flags().StringVar(&space, "space", "", "space id")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change and write nothing")
	return cmd
}

func writeReorganize(c *cli, k models.MemoryKey, rep memory.ReorganizeReport, dryRun bool) {
	w := c.stdout
	verb := "changed"
	if dryRun {
		verb = "would change (dry run)"
	}
	fmt.Fprintf(w, "== %s / %s ==\n%s: handbook %d → %d characters (cross-chat part %d); %d entries merged, %d without a live chat, %d dropped for the budget; beliefs %d retired, %d merged; %d perceptions folded to gist; %d orphaned index terms, %d vectors dropped; scribe asked about %d pairs, %d the same\n",
		k.CardID, k.SpaceID, verb, rep.HandbookBefore, rep.HandbookAfter, rep.CrossAfter, rep.Merged, rep.Stale, rep.Trimmed,
		rep.BeliefsRetired, rep.BeliefsMerged, rep.Folded, rep.Terms, rep.Vectors, rep.Asked, rep.Same)
	if rep.Over > 0 {
		fmt.Fprintf(w, "still %d characters over the handbook budget: a person's lines and chats' only records are kept\n", rep.Over)
	}
	if rep.Diff == "" {
		fmt.Fprintln(w, "nothing to tidy")
		return
	}
	fmt.Fprintln(w, rep.Diff)
}
