package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"troupe/bot"
	"troupe/cards"
	"troupe/models"
)

func (c *cli) memoryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Inspect and edit what characters remember across chats",
	}
	cmd.AddCommand(c.memoryShowCmd(), c.memoryForgetCmd(), c.memoryEditCmd(), c.memoryDeleteRecapCmd(), c.memoryBeliefCmd(), c.memoryWhyCmd(), c.memoryReorganizeCmd())
	return cmd
}

// withMemory opens the app without cards, for memory maintenance.
func (c *cli) withMemory(cmd *cobra.Command, fn func(a *app) error) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	lib, _ := cards.NewLibrary(nil, "")
	a, err := openApp(cmd.Context(), cfg, newLogger(cfg.Log, c.stderr), lib)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// memoryView is one (card, space) pair in full.
type memoryView struct {
	CardID   string                 `json:"card_id"`
	SpaceID  string                 `json:"space_id"`
	Resident string                 `json:"resident"`
	Handbook string                 `json:"handbook"`
	Recaps   []models.Recap         `json:"recaps"`
	Manifest []models.ManifestEntry `json:"manifest"`
	Chats    []models.Chat          `json:"chats"`
	// Summaries are the chats' active relay summaries (the [Previously]
	// of their prompts), whole: a scene's, one per member's view.
	Summaries []models.SummaryView `json:"summaries"`
	// Failing is the memory work whose last run failed: owed, retried.
	Failing []models.JobRecord `json:"failing"`
	// Record is the recorder's side: characters, perceptions per
	// character, threads, relationships, knowledge and the ledgers.
	Record models.RecordView `json:"record"`
	// Beliefs are the space's beliefs, with confidence and evidence.
	Beliefs []models.BeliefView `json:"beliefs"`
	// ResidentInjected is the resident as a turn injects it (before a
	// scene takes its part of the envelope); ResidentCut the stored
	// lines it leaves out or cuts inside, tags stripped.
	ResidentInjected string   `json:"resident_injected"`
	ResidentCut      []string `json:"resident_cut"`
	ResidentHandCut  int      `json:"resident_hand_cut"`
}

func (c *cli) memoryShowCmd() *cobra.Command {
	var card, space string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print a card's memory in a space, or list every (card, space) pair",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (card == "") != (space == "") {
				return usageError{errors.New("memory show: give both --card and --space, or neither")}
			}
			return c.withMemory(cmd, func(a *app) error {
				ctx := cmd.Context()
				keys := []models.MemoryKey{{CardID: card, SpaceID: space}}
				all, err := a.store.MemoryKeys(ctx)
				if err != nil {
					return err
				}
				if card != "" {
					// A mistyped id would print an empty memory.
					if err := checkMemoryKey(all, card, space); err != nil {
						return err
					}
				} else {
					keys = all
					if !asJSON {
						for _, k := range keys {
							fmt.Fprintf(c.stdout, "%s\t%s\n", k.CardID, k.SpaceID)
						}
						return nil
					}
				}
				var views []memoryView
				for _, k := range keys {
					st, err := a.store.LoadMemory(ctx, k.CardID, k.SpaceID)
					if err != nil {
						return err
					}
					chats, err := a.store.SpaceChats(ctx, k.CardID, k.SpaceID)
					if err != nil {
						return err
					}
					failing, err := a.store.FailingJobs(ctx, k.CardID, k.SpaceID, k.CardID+"|"+k.SpaceID)
					if err != nil {
						return err
					}
					var sums []models.SummaryView
					for _, ch := range chats {
						ss, err := a.store.ActiveSummaries(ctx, ch)
						if err != nil {
							return err
						}
						sums = append(sums, ss...)
					}
					rec, err := a.store.RecordView(ctx, k.CardID, k.SpaceID)
					if err != nil {
						return err
					}
					beliefs, err := a.store.Beliefs(ctx, k.SpaceID, "")
					if err != nil {
						return err
					}
					rep, err := a.memory.Report(ctx, k.CardID, k.SpaceID)
					if err != nil {
						return err
					}
					views = append(views, memoryView{CardID: k.CardID, SpaceID: k.SpaceID, Resident: st.Resident, Handbook: st.Handbook, Recaps: st.Recaps, Manifest: st.Entries, Chats: chats, Summaries: sums, Failing: failing, Record: rec, Beliefs: beliefs,
						ResidentInjected: rep.Resident, ResidentCut: rep.ResidentCut, ResidentHandCut: rep.ResidentHandCut})
				}
				if asJSON {
					enc := json.NewEncoder(c.stdout)
					enc.SetIndent("", "  ")
					if card != "" {
						return enc.Encode(views[0])
					}
					return enc.Encode(views)
				}
				v := views[0]
				w := c.stdout
				fmt.Fprintf(w, "== resident (%s / %s) ==\n%s\n\n", v.CardID, v.SpaceID, v.Resident)
				writeResidentCut(w, v)
				fmt.Fprintf(w, "\n== handbook ==\n%s\n\n== recaps ==\n", v.Handbook)
				for _, r := range v.Recaps {
					fmt.Fprintf(w, "-- %s (%s) --\n%s\n", r.ChatID, r.ChatName, r.Content)
				}
				fmt.Fprintln(w, "\n== manifest ==")
				for _, e := range v.Manifest {
					fmt.Fprintf(w, "%s\trecap=%.12s\tmerged=%.12s\n", e.ChatID, e.RecapHash, e.MergedHash)
				}
				fmt.Fprintln(w, "\n== chats ==")
				for _, ch := range v.Chats {
					fmt.Fprintf(w, "%s\t%s\t%s\n", ch.ID, ch.ChannelID, ch.Name)
				}
				writeSummaries(w, v.Summaries)
				writeRecord(w, v.Record)
				writeBeliefs(w, v.Beliefs)
				writeFailing(w, v.Failing)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&card, "card", "", "card id")
	cmd.Flags().StringVar(&space, "space", "", "space id (e.g. discord:guild:123, discord:channel:123/456, telegram:user:42, console:local:ada)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeSummaries prints each chat's active relay summary whole: the
// [Previously] its next prompt holds (memory edit --summary replaces it).
func writeSummaries(w io.Writer, ss []models.SummaryView) {
	fmt.Fprintln(w, "\n== summaries ==")
	if len(ss) == 0 {
		fmt.Fprintln(w, "none (no chat was compacted yet)")
		return
	}
	for _, s := range ss {
		view := ""
		if len(s.Members) > 0 {
			view = ", view of " + strings.Join(s.Members, ", ")
		}
		fmt.Fprintf(w, "-- chat %s (through message %s, %d turns%s) --\n%s\n", s.ChatID, s.CoversThroughID, s.Beats, view, s.Content)
	}
}

// writeResidentCut says what the injected resident leaves out of the
// stored one printed above it: the stored one is whole, the budget is the
// injected view's (prompt.RenderResident).
func writeResidentCut(w io.Writer, v memoryView) {
	fmt.Fprintln(w, "== resident as injected ==")
	switch {
	case v.Resident == "":
		fmt.Fprintln(w, "none")
		return
	case len(v.ResidentCut) == 0:
		fmt.Fprintln(w, "whole (a turn whose scene leaves less room cuts it from the end)")
		return
	}
	fmt.Fprintf(w, "the injected view leaves out or shortens %d lines of the stored resident above (%d written by hand), even before a scene takes its room:\n", len(v.ResidentCut), v.ResidentHandCut)
	for _, l := range v.ResidentCut {
		fmt.Fprintf(w, "\t%s\n", l)
	}
}

// writeRecord prints the recorder's side of a card's memory in a space.
func writeRecord(w io.Writer, r models.RecordView) {
	fmt.Fprintf(w, "\n== record ==\nevents: %d (%d waiting for the recorder)\n", r.Events, r.Unsealed)
	fmt.Fprintln(w, "\n== characters ==")
	for _, c := range r.Characters {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Name, c.Kind, c.CardID)
	}
	fmt.Fprintln(w, "\n== perceptions ==")
	names := make([]string, 0, len(r.Perceptions))
	for n := range r.Perceptions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "-- %s --\n", n)
		for _, p := range r.Perceptions[n] {
			fmt.Fprintf(w, "turn %d\t%s\timportance=%d\t%s\n", p.Seq, p.Mode, p.Importance, oneLine(p.Text))
		}
	}
	fmt.Fprintln(w, "\n== threads ==")
	for _, t := range r.Threads {
		state := "open"
		if !t.Open {
			state = "resolved"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.ID, t.Kind, state, oneLine(t.Text))
	}
	fmt.Fprintln(w, "\n== relationships ==")
	for _, rel := range r.Relationships {
		fmt.Fprintf(w, "%s → %s\t%s\t(chat %s)\n", rel.FromName, rel.ToName, oneLine(rel.Description), rel.ChatID)
	}
	fmt.Fprintln(w, "\n== knowledge ==")
	for _, k := range r.Knowledge {
		fmt.Fprintf(w, "%s knows %s (%s)\t(chat %s)\n", k.Character, k.Entity, k.Kind, k.ChatID)
	}
	fmt.Fprintln(w, "\n== ledgers ==")
	for _, l := range r.Ledgers {
		fmt.Fprintf(w, "%s\t%s\n", l.ChatID, l.Snapshot)
	}
	fmt.Fprintln(w, "\n== recorder runs ==")
	for _, j := range r.Runs {
		fmt.Fprintf(w, "%s\t%s\t%s\n\t%s\n", j.Key, j.Outcome, j.UpdatedAt.UTC().Format(time.RFC3339), j.Reason)
	}
}

// writeBeliefs prints the space's beliefs: id, character, confidence,
// evidence for and against, text.
func writeBeliefs(w io.Writer, bs []models.BeliefView) {
	fmt.Fprintln(w, "\n== beliefs ==")
	for _, b := range bs {
		fmt.Fprintln(w, oneLine(bot.BeliefLine(b)))
		for _, e := range b.Evidence {
			fmt.Fprintf(w, "\t%s p:%s turn %d\n", e.Stance, e.Perception, e.Turn)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeFailing prints the failing memory jobs: owed work, when it is tried
// next and why the last try failed.
func writeFailing(w io.Writer, recs []models.JobRecord) {
	fmt.Fprintln(w, "\n== failing jobs ==")
	if len(recs) == 0 {
		fmt.Fprintln(w, "none")
		return
	}
	for _, r := range recs {
		next := "next turn or sweep"
		if r.RetryAt != nil {
			next = r.RetryAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\tattempts=%d\tlast=%s\tnext=%s\n\t%s\n", r.Kind, r.Key, r.Failures, r.UpdatedAt.UTC().Format(time.RFC3339), next, r.Reason)
	}
}

func (c *cli) memoryForgetCmd() *cobra.Command {
	var chatID string
	var yes bool
	cmd := &cobra.Command{
		Use:   "forget",
		Short: "Forget a chat: delete it and everything only it supports (as /forget does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if chatID == "" {
				return usageError{errors.New("memory forget: --chat is required")}
			}
			if !yes {
				return usageError{errors.New("memory forget cannot be undone: add --yes to confirm")}
			}
			return c.withMemory(cmd, func(a *app) error {
				ctx := cmd.Context()
				f, err := a.memory.ForgetChat(ctx, chatID)
				if errors.Is(err, models.ErrNotFound) {
					if _, terr := a.store.Tombstone(ctx, chatID); terr == nil {
						fmt.Fprintf(c.stdout, "chat %s was already forgotten\n", chatID)
						return nil
					}
					return fmt.Errorf("no chat %s", chatID)
				}
				if err != nil {
					return err
				}
				// An in-process queue ends with this command; the sweeper of
				// the next worker finds the owed consolidation.
				for _, card := range f.Cards {
					if err := a.queue.Consolidate(ctx, card, f.SpaceID); err != nil {
						a.log.Warn("enqueue consolidation", "card_id", card, "err", err)
					}
				}
				_, err = fmt.Fprintf(c.stdout, "forgot chat %s (card %s, space %s)\n", chatID, f.CardID, f.SpaceID)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&chatID, "chat", "", "chat id (see `troupe memory show`)")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm")
	return cmd
}

func (c *cli) memoryEditCmd() *cobra.Command {
	var card, space, handbookPath, residentPath, summaryPath, chatID, character string
	cmd := &cobra.Command{
		Use:   "edit",
		Short: "Replace the handbook, the resident summary or a chat's relay summary by hand",
		Long: "Replace the handbook and/or resident summary of a card in a space (--card, --space), or the\n" +
			"relay summary of a chat (--chat; in a scene also --character, whose view it is). Use - to read\n" +
			"from stdin.\n" +
			"Lines without [chat:ID] tags outside the chat blocks of a handbook or resident count as yours\n" +
			"and are always kept; chat blocks are rebuilt from the recaps. The old versions go to history\n" +
			"and every merged mark is cleared, so the next consolidation re-merges all recaps.\n" +
			"A relay summary is stored anew over what the old one covered (the old one stays in the chat's\n" +
			"history until the chat is forgotten); the next compaction merges from your text, and the\n" +
			"chat's recap is rewritten from it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files := handbookPath != "" || residentPath != ""
			switch {
			case summaryPath != "" && files:
				return usageError{errors.New("memory edit: --summary edits a chat; give it apart from --handbook and --resident")}
			case summaryPath != "" && chatID == "":
				return usageError{errors.New("memory edit: --summary needs --chat (see troupe memory show)")}
			case summaryPath == "" && (chatID != "" || character != ""):
				return usageError{errors.New("memory edit: --chat and --character go with --summary")}
			case summaryPath == "" && (card == "" || space == "" || !files):
				return usageError{errors.New("memory edit: --card, --space and --handbook and/or --resident are required (or --chat and --summary)")}
			}
			read := func(path string) (*string, error) {
				if path == "" {
					return nil, nil
				}
				var data []byte
				var err error
				if path == "-" {
					data, err = io.ReadAll(c.stdin)
				} else {
					data, err = os.ReadFile(path)
				}
				if err != nil {
					return nil, err
				}
				if !utf8.Valid(data) {
					return nil, fmt.Errorf("%s is not UTF-8 text", path)
				}
				s := strings.TrimSpace(string(data))
				return &s, nil
			}
			if summaryPath != "" {
				text, err := read(summaryPath)
				if err != nil {
					return usageError{err}
				}
				if *text == "" {
					return usageError{errors.New("memory edit: the new summary is empty; a summary cannot be deleted by hand")}
				}
				return c.withMemory(cmd, func(a *app) error {
					return c.editSummary(cmd.Context(), a, chatID, character, card, space, *text)
				})
			}
			hb, err := read(handbookPath)
			if err != nil {
				return usageError{err}
			}
			rs, err := read(residentPath)
			if err != nil {
				return usageError{err}
			}
			return c.withMemory(cmd, func(a *app) error {
				ctx := cmd.Context()
				if err := a.store.EditMemory(ctx, card, space, hb, rs, "edited by hand"); err != nil {
					return err
				}
				if err := a.queue.Consolidate(ctx, card, space); err != nil {
					a.log.Warn("enqueue consolidation", "err", err)
				}
				_, err := fmt.Fprintf(c.stdout, "memory of %s in %s replaced; it is rebuilt on the next consolidation\n", card, space)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&card, "card", "", "card id")
	cmd.Flags().StringVar(&space, "space", "", "space id")
	cmd.Flags().StringVar(&handbookPath, "handbook", "", "file with the new handbook (- for stdin)")
	cmd.Flags().StringVar(&residentPath, "resident", "", "file with the new resident summary (- for stdin)")
	cmd.Flags().StringVar(&summaryPath, "summary", "", "file with the new relay summary of --chat (- for stdin)")
	cmd.Flags().StringVar(&chatID, "chat", "", "chat id whose relay summary --summary replaces")
	cmd.Flags().StringVar(&character, "character", "", "in a scene: the character whose view's summary --summary replaces")
	return cmd
}

// editSummary replaces a chat's active relay summary by hand. A --card or
// --space given with it must be the chat's: a mistyped one is refused
// rather than ignored.
func (c *cli) editSummary(ctx context.Context, a *app, chatID, character, card, space, text string) error {
	chat, err := a.store.Chat(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("no chat %s (see troupe memory show)", chatID)
	}
	if err != nil {
		return err
	}
	if (card != "" && card != chat.CardID) || (space != "" && space != chat.SpaceID) {
		return usageError{fmt.Errorf("memory edit: chat %s is of card %s in space %s", chatID, chat.CardID, chat.SpaceID)}
	}
	sum, err := a.store.EditSummary(ctx, chatID, character, text)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return fmt.Errorf("chat %s has no relay summary yet (nothing was compacted): there is nothing to edit", chatID)
	case errors.Is(err, models.ErrSceneSummary):
		return usageError{fmt.Errorf("memory edit: chat %s is a scene with a summary per character: add --character NAME", chatID)}
	case err != nil:
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "relay summary of chat %s replaced (summary %s, through message %s); the old one stays in the chat's history\n", chatID, sum.ID, sum.CoversThroughID)
	return err
}

func (c *cli) memoryDeleteRecapCmd() *cobra.Command {
	var chatID, cardID string
	cmd := &cobra.Command{
		Use:   "delete-recap",
		Short: "Delete a chat's recaps by hand (every cast card's, or one card's); the memory is rebuilt from the remaining recaps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if chatID == "" {
				return usageError{errors.New("memory delete-recap: --chat is required")}
			}
			return c.withMemory(cmd, func(a *app) error {
				ctx := cmd.Context()
				keys, err := a.memory.DeleteRecap(ctx, chatID, cardID)
				if errors.Is(err, models.ErrNotFound) {
					if cardID != "" {
						return fmt.Errorf("card %s keeps no recap of chat %s", cardID, chatID)
					}
					return fmt.Errorf("chat %s has no recap", chatID)
				}
				if err != nil {
					return err
				}
				for _, k := range keys {
					if err := a.queue.Consolidate(ctx, k.CardID, k.SpaceID); err != nil {
						a.log.Warn("enqueue consolidation", "card_id", k.CardID, "err", err)
					}
					if _, err := fmt.Fprintf(c.stdout, "deleted the recap card %s keeps of chat %s\n", k.CardID, chatID); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&chatID, "chat", "", "chat id")
	cmd.Flags().StringVar(&cardID, "card", "", "delete only this cast card's recap (default: every card's)")
	return cmd
}

func (c *cli) memoryBeliefCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "belief", Short: "Manage the beliefs characters formed by reflection"}
	cmd.AddCommand(&cobra.Command{
		Use:   "delete ID",
		Short: "Delete one belief; the perceptions it cited are reflected on again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withMemory(cmd, func(a *app) error {
				b, err := a.store.DeleteBelief(cmd.Context(), args[0])
				if errors.Is(err, models.ErrNotFound) {
					return fmt.Errorf("there is no belief %s", args[0])
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(c.stdout, "deleted belief %s of %s\n", b.ID, b.Character)
				return err
			})
		},
	})
	return cmd
}
