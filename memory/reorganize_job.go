package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"troupe/belief"
	"troupe/handbook"
	"troupe/models"
)

// KindReorganize is the reorganize job's kind in the job table.
const KindReorganize = "reorganize"

// ReorganizeStore is the part of the store a reorganize needs.
type ReorganizeStore interface {
	LoadReorganize(ctx context.Context, cardID, spaceID, character string) (models.ReorganizeFacts, error)
	InstallReorganize(ctx context.Context, r models.ReorganizeInstall) (models.ReorganizeResult, error)
	Reorganize(ctx context.Context, cardID, spaceID string) (models.ReorganizeState, error)
}

// ReorganizeParams are the reorganize constants (memory.*): its budgets
// and when it is owed.
type ReorganizeParams struct {
	// HandbookMaxChars bounds the handbook's cross-chat part; BeliefsMax
	// a character's beliefs in a space. 0: no bound.
	HandbookMaxChars, BeliefsMax int
	// Batches and Tokens: a reorganize is owed after this many memory
	// writes, or this many tokens written, since the last one.
	Batches, Tokens int
}

// ReorganizeReport is what a reorganize did, or would do (a dry run).
type ReorganizeReport struct {
	Result
	// Diff lists what changed, a line each: "- " a line that goes, "+ "
	// one that comes, "~ " a belief or perception changed.
	Diff string
	// HandbookBefore and HandbookAfter are the handbook's sizes (runes);
	// CrossAfter its cross-chat part's after; Over what is still past the
	// budget.
	HandbookBefore, HandbookAfter, CrossAfter, Over int
	// Merged, Stale and Trimmed count handbook entries; BeliefsRetired and
	// BeliefsMerged beliefs; Folded perceptions; Terms and Vectors the
	// orphans dropped (0 on a dry run).
	Merged, Stale, Trimmed  int
	BeliefsRetired          int
	BeliefsMerged, Folded   int
	Terms, Vectors          int64
	Asked, Same             int
	ScribeChars, ScribeCall int
}

// Reorganize tidies a card's memory in a space (seed 001) and records the
// result: the job's entry point.
func (s *Service) Reorganize(ctx context.Context, cardID, spaceID string) (Result, error) {
	rep, err := s.ReorganizeNow(ctx, cardID, spaceID, false)
	return rep.Result, err
}

// ReorganizeNow runs a reorganize of a card's memory in a space; with
// dryRun it plans (the scribe is asked as in a run) and installs nothing,
// and no outcome is recorded. A run's outcome is recorded in the job
// table; a refused answer installs nothing and leaves it owed.
func (s *Service) ReorganizeNow(ctx context.Context, cardID, spaceID string, dryRun bool) (ReorganizeReport, error) {
	key := models.MemoryJobKey(cardID, spaceID)
	var rep ReorganizeReport
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		rep, err = s.reorganize(ctx, cardID, spaceID, dryRun)
		if !errors.Is(err, models.ErrStale) {
			break
		}
		err = ErrStaleRetries
	}
	if dryRun {
		return rep, err
	}
	rep.Result, err = s.record(ctx, KindReorganize, key, rep.Result, err)
	return rep, err
}

func (s *Service) reorganize(ctx context.Context, cardID, spaceID string, dryRun bool) (ReorganizeReport, error) {
	var rep ReorganizeReport
	rs, ok := s.store.(ReorganizeStore)
	if !ok {
		rep.Result = Result{Outcome: Skipped, Reason: "the store cannot reorganize"}
		return rep, nil
	}
	// Beliefs are the space's reflections' to change: none runs meanwhile.
	unlock, err := s.lock(ctx, spaceReflectionLock(spaceID))
	if err != nil {
		return rep, err
	}
	defer unlock()
	lang, charName := s.cardLanguage(ctx, cardID)
	f, err := rs.LoadReorganize(ctx, cardID, spaceID, charName)
	if err != nil {
		return rep, err
	}
	live := map[string]bool{}
	for _, r := range f.Memory.Recaps {
		live[r.ChatID] = true
	}
	fold, alive := FadedPerceptions(f.Perceptions, f.Clocks, s.cfg.FadingRules)
	if !s.cfg.FadingRules.On {
		fold = nil
	}
	judged := handbook.HandLineSet(f.State.Judged)
	beliefs := make([]belief.Belief, 0, len(f.Beliefs))
	for _, b := range f.Beliefs {
		beliefs = append(beliefs, b.Belief)
	}
	bin := BeliefsInput{Beliefs: beliefs, Recalls: f.Recalls, Alive: alive, Max: s.cfg.Reorganize.BeliefsMax}
	pairs := HandbookPairs(f.Memory.Handbook, f.Memory.HandbookHand, judged)
	pairs = append(pairs, BeliefPairs(bin, judged)...)
	pairs = pairs[:min(len(pairs), MaxPairs)]
	var same []Pair
	if len(pairs) > 0 {
		prompt := ReorganizePrompt(lang, pairs)
		var picked []int
		answer, err := s.ask(ctx, KindReorganize, lang, prompt, func(a string) (string, error) {
			var perr error
			picked, perr = ParseReorganize(a, len(pairs))
			return a, perr
		})
		if err != nil {
			return rep, err
		}
		rep.ScribeCall = 1
		for _, m := range prompt {
			rep.ScribeChars += utf8.RuneCountInString(m.Content)
		}
		rep.ScribeChars += utf8.RuneCountInString(answer)
		isSame := map[int]bool{}
		for _, i := range picked {
			same = append(same, pairs[i])
			isSame[i] = true
		}
		for i, p := range pairs {
			if !isSame[i] {
				judged[PairKey(p.A, p.B)] = true
			}
		}
		rep.Asked, rep.Same = len(pairs), len(same)
	}
	hb := PlanHandbook(HandbookInput{Text: f.Memory.Handbook, Hand: f.Memory.HandbookHand, Live: live, MaxChars: s.cfg.Reorganize.HandbookMaxChars, Same: same})
	bin.Same = same
	bp := PlanBeliefs(bin)
	rep.HandbookBefore, rep.HandbookAfter = utf8.RuneCountInString(f.Memory.Handbook), utf8.RuneCountInString(hb.Text)
	rep.CrossAfter, rep.Over = hb.Size, hb.Over
	rep.Merged, rep.Stale, rep.Trimmed = hb.Merged, hb.Stale, hb.Trimmed
	rep.BeliefsRetired, rep.Folded = len(bp.Retired), len(fold)
	for _, m := range bp.Merges {
		rep.BeliefsMerged += len(m.Drop)
	}
	rep.Diff = reorganizeDiff(f, hb.Text, bp, fold)
	change := fmt.Sprintf("handbook: %d merged, %d without a live chat, %d over budget dropped (%d → %d characters); beliefs: %d retired, %d merged; perceptions folded to gist: %d",
		rep.Merged, rep.Stale, rep.Trimmed, rep.HandbookBefore, rep.HandbookAfter, rep.BeliefsRetired, rep.BeliefsMerged, rep.Folded)
	if dryRun {
		rep.Result = Result{Outcome: Skipped, Reason: "dry run: " + change}
		return rep, nil
	}
	res, err := rs.InstallReorganize(ctx, models.ReorganizeInstall{CardID: cardID, SpaceID: spaceID, Character: charName, Version: f.Memory.Version(),
		Handbook: hb.Text, Retire: bp.Retired, Merge: bp.Merges, Fold: fold, Judged: joinJudged(judged),
		Change: models.ReorganizeChange{Merged: rep.Merged, Stale: rep.Stale, Trimmed: rep.Trimmed, HandbookBefore: rep.HandbookBefore,
			HandbookAfter: rep.HandbookAfter, BeliefsRetired: rep.BeliefsRetired, BeliefsMerged: rep.BeliefsMerged, Folded: rep.Folded}})
	if err != nil {
		return rep, err
	}
	rep.Terms, rep.Vectors = res.Terms, res.Vectors
	change += fmt.Sprintf("; orphaned index terms %d, vectors %d", res.Terms, res.Vectors)
	if hb.Over > 0 {
		change += fmt.Sprintf("; still %d characters over the handbook budget (a person's lines and chats' only records stay)", hb.Over)
	}
	if hb.Text == f.Memory.Handbook && len(bp.Retired) == 0 && len(bp.Merges) == 0 && len(fold) == 0 && res.Terms == 0 && res.Vectors == 0 {
		rep.Result = Result{Outcome: Skipped, Reason: "nothing to tidy"}
		return rep, nil
	}
	rep.Result = Result{Outcome: Written, Product: "reorganize:" + cardID + "|" + spaceID, Reason: change}
	return rep, nil
}

// maxJudged bounds the pairs a card and space remember as judged different.
const maxJudged = 4000

func joinJudged(set map[string]bool) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > maxJudged {
		keys = keys[len(keys)-maxJudged:]
	}
	return strings.Join(keys, "\n")
}

// reorganizeDiff lists what a reorganize changes.
func reorganizeDiff(f models.ReorganizeFacts, handbook string, bp BeliefsPlan, fold []string) string {
	var b strings.Builder
	after := map[string]int{}
	for _, l := range strings.Split(handbook, "\n") {
		after[l]++
	}
	before := map[string]int{}
	for _, l := range strings.Split(f.Memory.Handbook, "\n") {
		before[l]++
		if after[l] > 0 {
			after[l]--
			continue
		}
		if strings.TrimSpace(l) != "" {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(handbook, "\n") {
		if before[l] > 0 {
			before[l]--
			continue
		}
		if strings.TrimSpace(l) != "" {
			b.WriteString("+ " + l + "\n")
		}
	}
	text := map[string]string{}
	for _, v := range f.Beliefs {
		text[v.ID] = v.Text
	}
	for _, id := range bp.Retired {
		fmt.Fprintf(&b, "~ belief %s retired: %s\n", id, text[id])
	}
	for _, m := range bp.Merges {
		fmt.Fprintf(&b, "~ belief %s merged into %s: %s\n", strings.Join(m.Drop, ", "), m.Keep, text[m.Keep])
	}
	for _, id := range fold {
		fmt.Fprintf(&b, "~ perception %s folded to its gist: %s\n", id, f.Perceptions[id].Gist)
	}
	return strings.TrimRight(b.String(), "\n")
}
