package memory

import (
	"context"
	"errors"
	"fmt"

	"troupe/models"
	"troupe/prompt"
)

// Compact writes a new relay summary for the chat when its branch owes one
// (manual: /compact, with the smaller minimum). It re-reads everything from
// the store, so a duplicated or late job costs only the check. The result is
// recorded in the job table.
func (s *Service) Compact(ctx context.Context, chatID string, manual bool) (Result, error) {
	res, err := s.compact(ctx, chatID, manual)
	return s.record(ctx, KindCompact, chatID, res, err)
}

func (s *Service) compact(ctx context.Context, chatID string, manual bool) (Result, error) {
	// through is the end of the first plan's cut while its batches relay
	// it: the later batches are owed whatever the period says.
	through, batches, stale := "", 0, 0
	var res Result
	for {
		r, rest, err := s.compactOnce(ctx, chatID, manual, through)
		if errors.Is(err, models.ErrStale) {
			if stale++; stale == 3 {
				return Result{}, ErrStaleRetries
			}
			s.log.Info("compaction result stale; re-deriving", "chat_id", chatID, "attempt", stale)
			continue
		}
		if err != nil || r.Outcome != Written {
			if batches > 0 {
				// The batches installed stand; the rest stays owed.
				return res, err
			}
			return r, err
		}
		res, batches = r, batches+1
		if rest == "" {
			if batches > 1 {
				res.Reason += fmt.Sprintf(" (%d batches)", batches)
			}
			return res, nil
		}
		through = rest
	}
}

// compactOnce writes the summary of one batch of the chat's owed cut: the
// whole cut when it fits one scribe call, else its oldest beats that do.
// through, when set, is the end of the cut a relay is working through. It
// returns that end while beats of the cut remain, else "".
func (s *Service) compactOnce(ctx context.Context, chatID string, manual bool, through string) (Result, string, error) {
	chat, cast, err := s.chatAndCast(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, "", nil
	}
	if err != nil {
		return Result{}, "", err
	}
	if cast != nil {
		res, err := s.compactViews(ctx, chat, cast, manual)
		return res, "", err
	}
	br, err := s.store.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		return Result{}, "", err
	}
	turns := TurnsOf(br.Uncovered)
	plan := PlanCompaction(turns, s.cfg.Compact, manual)
	if through != "" {
		plan = planThrough(turns, through)
	}
	if !plan.Due {
		return Result{Outcome: Skipped, Reason: plan.Reason}, "", nil
	}
	lang, charName := s.cardLanguage(ctx, chat.CardID)
	userName := lastUserName(turns)
	ledger, err := s.store.Ledger(ctx, chatID)
	if err != nil {
		return Result{}, "", err
	}
	in := SummaryPromptInput{Language: lang, CharName: charName, UserName: userName, Ledger: ledger}
	prevID := ""
	if br.Summary != nil {
		in.PreviousSummary = br.Summary.Content
		prevID = br.Summary.ID
	}
	starts := prompt.CutStarts(turns)
	ends := batchEnds(starts, len(plan.Cut))
	build := func(k int) batch {
		b := in
		b.Transcript = Transcript(lang, plan.Cut[:ends[k-1]], charName, userName)
		return batch{prompt: SummaryPrompt(b), material: b.Transcript}
	}
	text, k, err := askBatch(s, KindCompact, len(ends), build, func(p []prompt.Message) (string, error) {
		return s.ask(ctx, KindCompact, lang, p, func(a string) (string, error) { return ValidateSummary(lang, a) })
	})
	if err != nil {
		return Result{}, "", err
	}
	cut := plan.Cut[:ends[k-1]]
	beats := beatsBefore(starts, len(cut))
	if br.Summary != nil {
		beats += br.Summary.Beats
	}
	sum, err := s.store.InstallSummary(ctx, chatID, prevID, cut[len(cut)-1].ID, text, beats)
	if errors.Is(err, models.ErrChatGone) {
		return Result{Outcome: Skipped, Reason: ReasonForgotten}, "", nil
	}
	if err != nil {
		return Result{}, "", err
	}
	rest := ""
	if k < len(ends) {
		rest = plan.CoversThroughID()
	}
	return Result{Outcome: Written, Product: sum.ID, Reason: fmt.Sprintf("covers %d beats through %s", beats, sum.CoversThroughID)}, rest, nil
}

// planThrough is the plan of a relay's next batch: the uncovered turns
// through the message through, due whatever the period says, for they
// were owed when the relay began.
func planThrough(turns []prompt.Turn, through string) Plan {
	for i, t := range turns {
		if t.ID == through {
			return Plan{Due: true, Cut: turns[:i+1], Beats: len(prompt.CutStarts(turns))}
		}
	}
	return Plan{Reason: "the cut being relayed left the branch"}
}

// batchEnds returns where batches of a cut of n turns may end: after each
// whole beat (before the next one's start), and at the cut's end.
func batchEnds(starts []int, n int) []int {
	var ends []int
	for _, i := range starts {
		if i > 0 && i < n {
			ends = append(ends, i)
		}
	}
	return append(ends, n)
}

// beatsBefore counts the beats that start before index end.
func beatsBefore(starts []int, end int) int {
	n := 0
	for _, i := range starts {
		if i < end {
			n++
		}
	}
	return n
}

// CompactionOwed reports whether the chat's branch owes an automatic
// compaction: in a scene, whether any member's view does.
func (s *Service) CompactionOwed(ctx context.Context, chat models.Chat) (bool, error) {
	cast, err := s.sceneCast(ctx, chat.ID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return false, err
	}
	if cast != nil {
		return s.viewsOwe(ctx, chat, cast)
	}
	br, err := s.store.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		return false, err
	}
	return PlanCompaction(TurnsOf(br.Uncovered), s.cfg.Compact, false).Due, nil
}

// TurnsOf converts stored messages to turns.
func TurnsOf(msgs []models.Message) []prompt.Turn {
	out := make([]prompt.Turn, len(msgs))
	for i, m := range msgs {
		out[i] = prompt.Turn{ID: m.ID, Role: m.Role, Name: m.AuthorName, Content: m.Content, WhisperTo: m.WhisperTo}
	}
	return out
}

func lastUserName(turns []prompt.Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == prompt.RoleUser && turns[i].Name != "" {
			return turns[i].Name
		}
	}
	return "User"
}
