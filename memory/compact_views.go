package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"troupe/models"
	"troupe/prompt"
)

// A scene's compaction (DESIGN "Scenes": a character's view). Every
// compaction cuts all views at one message; each member's part of the
// range is the messages of it that the member perceived. Members whose
// parts, previous summaries and own ledgers are the same share one scribe
// call and one stored summary (a scene nobody left costs what a one-card chat does);
// a member that perceived nothing of the range has its chain carried
// forward to the cut with no call, so its next walk starts there however
// long it was away. Views that once differed have different previous
// summaries, so they never share a call again.

// memberView is one cast member's view of the branch at compaction time.
type memberView struct {
	name   string
	cardID string
	branch models.Branch
	turns  []prompt.Turn
	plan   Plan
	// ledger is the member's own ledger, the only one its scribe sees.
	ledger string
}

// viewGroup is the members that share one summary of a compaction.
type viewGroup struct {
	members []string
	prev    *models.Summary
	cut     []prompt.Turn
	ledger  string
}

// loadViews reads every cast member's view (removed members too: when one
// comes back its walk starts at the last cut, not where it left).
func (s *Service) loadViews(ctx context.Context, chat models.Chat, cast []models.CastMember, manual bool) ([]memberView, error) {
	ledgerOf, err := s.viewLedgers(ctx, chat)
	if err != nil {
		return nil, err
	}
	views := make([]memberView, 0, len(cast))
	for _, m := range cast {
		br, err := s.store.LoadView(ctx, chat.HeadID, m.Name)
		if err != nil {
			return nil, err
		}
		turns := TurnsOf(br.Uncovered)
		views = append(views, memberView{name: m.Name, cardID: m.CardID, branch: br, turns: turns, plan: PlanCompaction(turns, s.cfg.Compact, manual),
			ledger: ledgerOf(m)})
	}
	return views, nil
}

// cutPoint picks the message every view is cut at: of the views that owe
// a compaction, the earliest cut end, so no due view loses its last keep
// beats. ok is false when no view owes one; reason then says why the
// first view does not.
func cutPoint(views []memberView) (through string, ok bool, reason string) {
	best := -1
	for _, v := range views {
		if !v.plan.Due {
			continue
		}
		id := v.plan.CoversThroughID()
		// Distance from the head: every walk ends at it.
		d := len(v.branch.Walk) - indexOf(v.branch.Walk, id)
		if d > best {
			best, through = d, id
		}
	}
	if best < 0 {
		if len(views) > 0 {
			reason = views[0].plan.Reason
		}
		return "", false, reason
	}
	return through, true, ""
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// groupViews splits the members by what the cut at through gives each:
// the same previous summary, the same perceived messages and the same own
// ledger share one summary. Members whose walk does not reach through (a cursor already
// past it) take no part.
func groupViews(views []memberView, through string) []viewGroup {
	var groups []viewGroup
	index := map[string]int{}
	for _, v := range views {
		at := indexOf(v.branch.Walk, through)
		if at < 0 {
			continue
		}
		var cut []prompt.Turn
		for i, m := range v.branch.Uncovered {
			if indexOf(v.branch.Walk[:at+1], m.ID) < 0 {
				break
			}
			cut = append(cut, v.turns[i])
		}
		key := Hash(v.ledger)
		if v.branch.Summary != nil {
			key += v.branch.Summary.ID
		}
		for _, t := range cut {
			key += "|" + t.ID
		}
		if i, ok := index[key]; ok {
			groups[i].members = append(groups[i].members, v.name)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, viewGroup{members: []string{v.name}, prev: v.branch.Summary, cut: cut, ledger: v.ledger})
	}
	return groups
}

// compactViews is compactOnce for a scene.
func (s *Service) compactViews(ctx context.Context, chat models.Chat, cast []models.CastMember, manual bool) (Result, error) {
	views, err := s.loadViews(ctx, chat, cast, manual)
	if err != nil {
		return Result{}, err
	}
	through, ok, reason := cutPoint(views)
	if !ok {
		return Result{Outcome: Skipped, Reason: reason}, nil
	}
	lang, _ := s.cardLanguage(ctx, chat.CardID)
	groups := groupViews(views, through)
	out := make([]models.ViewSummary, 0, len(groups))
	calls := 0
	for _, g := range groups {
		vs := models.ViewSummary{Members: g.members}
		if g.prev != nil {
			vs.PrevID, vs.Content, vs.Beats = g.prev.ID, g.prev.Content, g.prev.Beats
		}
		if len(g.cut) > 0 {
			// Only what these members perceived goes to the scribe,
			// their own ledger included.
			userName := lastUserName(g.cut)
			in := SummaryPromptInput{Language: lang, CharName: strings.Join(g.members, ", "), UserName: userName,
				Ledger: g.ledger, PreviousSummary: vs.Content}
			text, n, err := s.foldSummary(ctx, in, g.cut)
			if err != nil {
				return Result{}, err
			}
			calls += n
			vs.Content = text
			vs.Beats += len(prompt.BeatStarts(g.cut))
		}
		out = append(out, vs)
	}
	sums, err := s.store.InstallViews(ctx, chat.ID, through, out)
	if errors.Is(err, models.ErrChatGone) {
		return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
	}
	if err != nil {
		return Result{}, err
	}
	ids := make([]string, len(sums))
	for i, sum := range sums {
		ids[i] = sum.ID
	}
	return Result{Outcome: Written, Product: ids[0],
		Reason: fmt.Sprintf("%d views through %s: %d summaries, %d scribe calls (%s)", len(views), through, len(sums), calls, strings.Join(ids, " "))}, nil
}

// foldSummary writes the summary of cut from in (whose Transcript it
// fills): in one scribe call when it fits, else batch by batch, oldest
// first, each batch's summary the previous one of the next. The views of
// a scene are installed together, so the batches are folded before, not
// installed one by one. It returns the summary and the calls it took.
func (s *Service) foldSummary(ctx context.Context, in SummaryPromptInput, cut []prompt.Turn) (string, int, error) {
	lang := in.Language
	validate := func(a string) (string, error) { return ValidateSummary(lang, a) }
	for calls := 1; ; calls++ {
		ends := batchEnds(prompt.BeatStarts(cut), len(cut))
		build := func(k int) batch {
			b := in
			b.Transcript = Transcript(lang, cut[:ends[k-1]], in.CharName, in.UserName)
			return batch{prompt: SummaryPrompt(b), material: b.Transcript}
		}
		text, k, err := askBatch(s, KindCompact, len(ends), build, func(p []prompt.Message) (string, error) {
			return s.ask(ctx, KindCompact, lang, p, validate)
		})
		if err != nil || k == len(ends) {
			return text, calls, err
		}
		cut = cut[ends[k-1]:]
		in.PreviousSummary = text
	}
}

// viewsOwe reports whether any member's view owes an automatic compaction.
func (s *Service) viewsOwe(ctx context.Context, chat models.Chat, cast []models.CastMember) (bool, error) {
	views, err := s.loadViews(ctx, chat, cast, false)
	if err != nil {
		return false, err
	}
	_, ok, _ := cutPoint(views)
	return ok, nil
}

// chatAndCast reads the chat and, for a scene, its cast (see sceneCast);
// ErrNotFound when the chat is gone.
func (s *Service) chatAndCast(ctx context.Context, chatID string) (models.Chat, []models.CastMember, error) {
	chat, err := s.store.Chat(ctx, chatID)
	if err != nil {
		return chat, nil, err
	}
	cast, err := s.sceneCast(ctx, chatID)
	return chat, cast, err
}

// sceneCast returns the chat's cast, removed members included, when it is
// a scene (more than one card ever cast); nil for a one-card chat, whose
// view is the whole chat.
func (s *Service) sceneCast(ctx context.Context, chatID string) ([]models.CastMember, error) {
	cast, err := s.store.Cast(ctx, chatID, true)
	if err != nil || len(cast) < 2 {
		return nil, err
	}
	return cast, nil
}
