package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"troupe/models"
	"troupe/prompt"
)

// A scene's recaps: each cast card keeps its own recap of the chat, written
// from what its character perceived (its view's summary and messages, its
// own ledger), so a later chat of that card learns nothing its character
// did not witness. Members with the same view, own ledger, previous recap
// and card language share one call.

// viewRecap is one member's part of a scene's recap job.
type viewRecap struct {
	member models.CastMember
	branch models.Branch
	turns  []prompt.Turn
	fp     string
	// last is the card's recap so far; prev, what of it the new one
	// builds on (see buildsOn).
	last models.Recap
	prev string
	// off says last covers a turn a /regen discarded.
	off    bool
	ledger string
}

// viewFingerprint is the state a member's recap is written from: the last
// message it perceived (else its summary), its summary and its own
// ledger; a member away while the chat went on owes no new recap.
func viewFingerprint(br models.Branch, ledger string) string {
	last, sumID := "", ""
	if br.Summary != nil {
		sumID = br.Summary.ID
	}
	if n := len(br.Uncovered); n > 0 {
		last = br.Uncovered[n-1].ID
	}
	return Hash("view", last, sumID, ledger)
}

// owedRecaps lists the members whose recap is owed: a view that changed
// since its card's recap, with turns or a summary to write from.
func (s *Service) owedRecaps(ctx context.Context, chat models.Chat, cast []models.CastMember) ([]viewRecap, error) {
	ledgerOf, err := s.viewLedgers(ctx, chat)
	if err != nil {
		return nil, err
	}
	var owed []viewRecap
	for _, m := range cast {
		br, err := s.store.LoadView(ctx, chat.HeadID, m.Name)
		if err != nil {
			return nil, err
		}
		ledger := ledgerOf(m)
		v := viewRecap{member: m, branch: br, turns: TurnsOf(br.Uncovered), fp: viewFingerprint(br, ledger), ledger: ledger}
		if len(prompt.BeatStarts(v.turns)) == 0 && (br.Summary == nil || br.Summary.Content == "") {
			continue
		}
		prev, err := s.store.CardRecap(ctx, chat.ID, m.CardID)
		switch {
		case errors.Is(err, models.ErrNotFound):
		case err != nil:
			return nil, err
		case prev.Fingerprint == v.fp:
			continue
		}
		v.last = prev
		owed = append(owed, v)
	}
	return owed, nil
}

// recapViews is recap for a scene.
func (s *Service) recapViews(ctx context.Context, chat models.Chat, cast []models.CastMember) (Result, error) {
	owed, err := s.owedRecaps(ctx, chat, cast)
	if err != nil {
		return Result{}, err
	}
	if len(owed) == 0 {
		return Result{Outcome: Skipped, Reason: ReasonUnchanged}, nil
	}
	groups := map[string][]viewRecap{}
	var keys []string
	for _, v := range owed {
		if v.prev, v.off, err = s.buildsOn(ctx, chat, v.last); err != nil {
			return Result{}, err
		}
		// A recap is written in its card's language, which its
		// consolidation reads it in.
		lang, _ := s.cardLanguage(ctx, v.member.CardID)
		key := lang + "|" + Hash(v.prev) + Hash(v.ledger)
		if v.branch.Summary != nil {
			key += v.branch.Summary.ID
		}
		for _, t := range v.turns {
			key += "|" + t.ID
		}
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], v)
	}
	var written []string
	calls := 0
	for _, key := range keys {
		g := groups[key]
		names := make([]string, len(g))
		for i, v := range g {
			names[i] = v.member.Name
		}
		first := g[0]
		lang, _ := s.cardLanguage(ctx, first.member.CardID)
		user := lastUserName(first.turns)
		in := RecapPromptInput{Language: lang, CharName: strings.Join(names, ", "), UserName: user, ChatName: chat.Name,
			PreviousRecap: first.prev, Ledger: first.ledger}
		if first.branch.Summary != nil {
			in.Summary = first.branch.Summary.Content
		}
		text, err := s.foldRecap(ctx, in, first.turns)
		if err != nil {
			return Result{}, err
		}
		calls++
		for _, v := range g {
			rec := models.Recap{ChatID: chat.ID, CardID: v.member.CardID, SpaceID: chat.SpaceID, ChatName: chat.Name, Content: text, Hash: Hash(text), Fingerprint: v.fp, Covers: Covers(v.branch)}
			if err := s.installRecap(ctx, rec, v.last, v.off); err != nil {
				if errors.Is(err, models.ErrChatGone) {
					return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
				}
				return Result{}, err
			}
			written = append(written, v.member.CardID)
		}
	}
	sort.Strings(written)
	return Result{Outcome: Written, Product: "recap:" + chat.ID,
		Reason: fmt.Sprintf("recaps of %s (%d scribe calls)", strings.Join(written, ", "), calls)}, nil
}
