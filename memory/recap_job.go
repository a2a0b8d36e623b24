package memory

import (
	"context"
	"errors"
	"fmt"

	"troupe/models"
	"troupe/prompt"
)

// Recap writes the chat's recap when its fingerprint (head, active summary,
// ledger) changed since the last one. The result is recorded.
func (s *Service) Recap(ctx context.Context, chatID string) (Result, error) {
	res, err := s.recap(ctx, chatID)
	return s.record(ctx, KindRecap, chatID, res, err)
}

// Fingerprint is the state a recap was written from.
func (s *Service) Fingerprint(ctx context.Context, chat models.Chat) (string, models.Branch, string, error) {
	br, err := s.store.LoadBranch(ctx, chat.HeadID)
	if err != nil {
		return "", br, "", err
	}
	ledger, err := s.store.Ledger(ctx, chat.ID)
	if err != nil {
		return "", br, "", err
	}
	sumID := ""
	if br.Summary != nil {
		sumID = br.Summary.ID
	}
	return Hash(chat.HeadID, sumID, ledger), br, ledger, nil
}

// ReasonUnchanged: the chat did not change since its recap.
const ReasonUnchanged = "unchanged fingerprint"

func (s *Service) recap(ctx context.Context, chatID string) (Result, error) {
	chat, cast, err := s.chatAndCast(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if cast != nil {
		return s.recapViews(ctx, chat, cast)
	}
	fp, br, ledger, err := s.Fingerprint(ctx, chat)
	if err != nil {
		return Result{}, err
	}
	prev, err := s.store.Recap(ctx, chatID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return Result{}, err
	}
	if err == nil && prev.Fingerprint == fp {
		return Result{Outcome: Skipped, Reason: ReasonUnchanged}, nil
	}
	previous, off, err := s.buildsOn(ctx, chat, prev)
	if err != nil {
		return Result{}, err
	}
	turns := TurnsOf(br.Uncovered)
	if len(prompt.BeatStarts(turns)) == 0 && br.Summary == nil {
		return Result{Outcome: Skipped, Reason: "the chat has no turns yet"}, nil
	}
	lang, charName := s.cardLanguage(ctx, chat.CardID)
	user := lastUserName(turns)
	in := RecapPromptInput{Language: lang, CharName: charName, UserName: user, ChatName: chat.Name, PreviousRecap: previous, Ledger: ledger}
	if br.Summary != nil {
		in.Summary = br.Summary.Content
	}
	text, err := s.foldRecap(ctx, in, turns)
	if err != nil {
		return Result{}, err
	}
	rec := models.Recap{ChatID: chat.ID, CardID: chat.CardID, SpaceID: chat.SpaceID, ChatName: chat.Name, Content: text, Hash: Hash(text), Fingerprint: fp, Covers: Covers(br)}
	if err := s.installRecap(ctx, rec, prev, off); err != nil {
		if errors.Is(err, models.ErrChatGone) {
			return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
		}
		return Result{}, err
	}
	return Result{Outcome: Written, Product: "recap:" + chat.ID, Reason: "recap " + rec.Hash[:12]}, nil
}

// foldRecap writes the recap of turns from in (whose Evidence it fills):
// in one scribe call when they fit, else batch by batch, oldest first,
// each batch's recap the previous one of the next; the summary goes with
// the first batch only, for the first recap carries it on.
func (s *Service) foldRecap(ctx context.Context, in RecapPromptInput, turns []prompt.Turn) (string, error) {
	lang := in.Language
	validate := func(a string) (string, error) { return ValidateRecap(lang, a) }
	for {
		ends := batchEnds(prompt.BeatStarts(turns), len(turns))
		build := func(k int) batch {
			b := in
			b.Evidence = BuildEvidence(lang, turns[:ends[k-1]], in.CharName, in.UserName, s.cfg.RecapMaxChars)
			return batch{prompt: RecapPrompt(b), material: b.Evidence.Transcript}
		}
		text, k, err := askBatch(s, KindRecap, len(ends), build, func(p []prompt.Message) (string, error) {
			return s.ask(ctx, KindRecap, lang, p, validate)
		})
		if err != nil || k == len(ends) {
			return text, err
		}
		s.log.Info("recap folded one batch; folding the next", "chat_name", in.ChatName, "turns", ends[k-1], "left", len(turns)-ends[k-1])
		turns = turns[ends[k-1]:]
		in.PreviousRecap, in.Summary = text, ""
	}
}

// Covers is the identity of what a recap written from br covers: the last
// message of the branch (of the card's view, in a scene), else the one its
// summary covers through; "" for an empty branch.
func Covers(br models.Branch) string {
	if n := len(br.Uncovered); n > 0 {
		return br.Uncovered[n-1].ID
	}
	if br.Summary != nil {
		return br.Summary.CoversThroughID
	}
	return ""
}

// onBranch reports whether what the recap r covers is still on the chat's
// branch. A recap written before Covers was kept ("") is taken as it is:
// it was merged, or is merged, as it always was.
func (s *Service) onBranch(ctx context.Context, chat models.Chat, r models.Recap) (bool, error) {
	if r.Covers == "" {
		return true, nil
	}
	ok, err := s.store.OnBranch(ctx, chat.HeadID, r.Covers)
	if err != nil {
		return false, fmt.Errorf("memory: recap of chat %s: %w", chat.ID, err)
	}
	return ok, nil
}

// buildsOn returns the text of the previous recap prev that the next one
// is merged with: "" when there is none, and when a /regen took a message
// it covers off the chat's branch (off is then true), so the recap is
// written again from the branch alone (its summary and turns) and no
// discarded reply lives on through it. A recap written before Covers was
// kept cannot say what it covers and is not built on either.
func (s *Service) buildsOn(ctx context.Context, chat models.Chat, prev models.Recap) (text string, off bool, err error) {
	if prev.Content == "" || prev.Covers == "" {
		return "", false, nil
	}
	ok, err := s.onBranch(ctx, chat, prev)
	if err != nil {
		return "", false, err
	}
	if !ok {
		s.log.Info("the previous recap covers a turn no longer on the branch; writing it again from the branch",
			"chat_id", chat.ID, "card_id", prev.CardID, "covers", prev.Covers)
		return "", true, nil
	}
	return prev.Content, false, nil
}

// installRecap installs rec, the card's new recap of a chat, in place of
// prev; off says prev covers a turn a /regen discarded. If the card's
// memory had merged prev, the handbook and resident may hold the discarded
// turn's words in any line tagged with the chat, which a scribe asked to
// keep the lines of unchanged chats may keep for ever: they are removed
// whole, as /forget removes a chat's, and every merge mark cleared, in the
// recap's own transaction, so the next consolidation (enqueued after every
// recap written) writes the cross-chat facts again from every live recap.
func (s *Service) installRecap(ctx context.Context, rec, prev models.Recap, off bool) error {
	if !off {
		return s.store.InstallRecap(ctx, rec)
	}
	purged, err := s.store.RewriteRecap(ctx, rec, prev.Hash)
	if purged {
		s.log.Info("the recap that covers the discarded turn had been merged; the chat's lines left the handbook and resident, to be written again from every live recap",
			"chat_id", rec.ChatID, "card_id", rec.CardID, "space_id", rec.SpaceID)
	}
	return err
}

// RecapOwed reports whether the chat changed since its recap (or has none
// and has turns); in a scene, whether any cast card's view did.
func (s *Service) RecapOwed(ctx context.Context, chat models.Chat) (bool, error) {
	cast, err := s.sceneCast(ctx, chat.ID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return false, err
	}
	if cast != nil {
		owed, err := s.owedRecaps(ctx, chat, cast)
		return len(owed) > 0, err
	}
	fp, br, _, err := s.Fingerprint(ctx, chat)
	if err != nil {
		return false, err
	}
	prev, err := s.store.Recap(ctx, chat.ID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return br.Summary != nil || len(prompt.BeatStarts(TurnsOf(br.Uncovered))) > 0, nil
	case err != nil:
		return false, err
	}
	return prev.Fingerprint != fp, nil
}
