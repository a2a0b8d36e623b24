package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"troupe/memory"
)

// memoryWhyCmd prints what a chat's turns recalled and why, from the
// inspector's records (recall.diagnostics).
func (c *cli) memoryWhyCmd() *cobra.Command {
	var chat, message string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "why",
		Short: "Show what a chat's last turns recalled and why (recall.diagnostics)",
		Long: `Print the recall of a chat's last turns, newest first: every candidate the
speaking character's recall found, its score by component (importance,
relevance, story-time recency, retention), whether it was picked and why
(mmr, association, or why not), how it was found (cue, words) and whether it
faded to its gist. Kept only with recall.diagnostics on, for the last
recall.diagnostics_turns turns of each chat; /forget deletes them, and the
records of other chats that name the forgotten chat's items.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withMemory(cmd, func(a *app) error {
				ds, err := a.store.RecallDiagnostics(cmd.Context(), chat, message, limit)
				if err != nil {
					return err
				}
				if len(ds) == 0 {
					if !a.cfg.Recall.Diagnostics {
						return fmt.Errorf("memory why: nothing kept for chat %s (recall.diagnostics is off)", chat)
					}
					return fmt.Errorf("memory why: nothing kept for chat %s", chat)
				}
				for _, d := range ds {
					if asJSON {
						fmt.Fprintln(c.stdout, d.Data)
						continue
					}
					rep, err := memory.ParseRecallReport(d.Data)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.stdout, "# turn %s (%s)\n%s\n\n", d.MessageID, d.CreatedAt.Format("2006-01-02 15:04:05"), rep.Text("en"))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&chat, "chat", "", "the chat id (see /chats or troupe memory show)")
	f.StringVar(&message, "message", "", "only the turn of this message id")
	f.IntVar(&limit, "limit", 1, "how many turns, newest first")
	f.BoolVar(&asJSON, "json", false, "print each turn's record as JSON, one a line")
	_ = cmd.MarkFlagRequired("chat")
	return cmd
}
