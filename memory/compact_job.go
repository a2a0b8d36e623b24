package memory

import (
	"context"
	"errors"
	"fmt"

	"troupe/models"
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
	for attempt := 0; attempt < 3; attempt++ {
		res, err := s.compactOnce(ctx, chatID, manual)
		if errors.Is(err, models.ErrStale) {
			s.log.Info("compaction result stale; re-deriving", "chat_id", chatID, "attempt", attempt+1)
			continue
		}
		return res, err
	}
	return Result{}, ErrStaleRetries
}

func (s *Service) compactOnce(ctx context.Context, chatID string, manual bool) (Result, error) {
	chat, cast, err := s.chatAndCast(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if cast != nil {
		return s.compactViews(ctx, chat, cast, manual)
	}
	br, err := s.store.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		return Result{}, err
	}
	turns := TurnsOf(br.Uncovered)
	plan := PlanCompaction(turns, s.cfg.Compact, manual)
	if !plan.Due {
		return Result{Outcome: Skipped, Reason: plan.Reason}, nil
	}
	lang, charName := s.cardLanguage(ctx, chat.CardID)
	userName := lastUserName(turns)
	ledger, err := s.store.Ledger(ctx, chatID)
	if err != nil {
		return Result{}, err
	}
	in := SummaryPromptInput{Language: lang, CharName: charName, UserName: userName,
		Transcript: Transcript(lang, plan.Cut, charName, userName), Ledger: ledger}
	prevID := ""
	if br.Summary != nil {
		in.PreviousSummary = br.Summary.Content
		prevID = br.Summary.ID
	}
	text, err := s.ask(ctx, KindCompact, lang, SummaryPrompt(in), func(a string) (string, error) { return ValidateSummary(lang, a) })
	if err != nil {
		return Result{}, err
	}
	beats := plan.CutBeats
	if br.Summary != nil {
		beats += br.Summary.Beats
	}
	sum, err := s.store.InstallSummary(ctx, chatID, prevID, plan.CoversThroughID(), text, beats)
	if errors.Is(err, models.ErrChatGone) {
		return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Outcome: Written, Product: sum.ID, Reason: fmt.Sprintf("covers %d beats through %s", beats, sum.CoversThroughID)}, nil
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
func TurnsOf(msgs []models.Message) []Turn {
	out := make([]Turn, len(msgs))
	for i, m := range msgs {
		out[i] = Turn{ID: m.ID, Role: m.Role, Name: m.AuthorName, Content: m.Content, WhisperTo: m.WhisperTo}
	}
	return out
}

func lastUserName(turns []Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == RoleUser && turns[i].Name != "" {
			return turns[i].Name
		}
	}
	return "User"
}
