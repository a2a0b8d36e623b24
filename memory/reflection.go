package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"troupe/belief"
	"troupe/config"
	"troupe/models"
	"troupe/prompt"
)

// KindReflect is the reflection job's kind, keyed by chat.
const KindReflect = "reflect"

// KindBeliefCheck names the scribe calls that check one belief against
// new perceptions (a part of reflection), for the model usage count.
const KindBeliefCheck = "belief_check"

// ReflectConfig is the reflection.* settings. MaxChecks and
// PivotalImportance left 0 are not set: NewService takes config.Default's.
type ReflectConfig struct {
	Trigger belief.TriggerConfig
	// MaxChecks is reflection.max_checks: belief checks per character;
	// below 0, none.
	MaxChecks int
	// PivotalImportance is reflection.pivotal_importance.
	PivotalImportance int
}

// ReflectConfigFrom turns reflection.* into the service's settings: the one
// place their defaults come from is config.Default.
func ReflectConfigFrom(r config.Reflection) ReflectConfig {
	checks := r.MaxChecks
	if checks == 0 {
		checks = -1 // max_checks 0: no belief checks
	}
	return ReflectConfig{Trigger: belief.TriggerConfig{Auto: r.Auto, EveryTurns: r.EveryTurns, MinTurns: r.MinTurns,
		PerRun: r.PerRun, MinNew: r.MinNew}, MaxChecks: checks, PivotalImportance: r.PivotalImportance}
}

// orDefaults is r with the settings left 0 taken from config.Default, so a
// service built without reflection.* (a test, a tool) checks and founds
// beliefs as the default configuration does. The trigger has no such
// fill: a zero trigger never runs on its own.
func (r ReflectConfig) orDefaults() ReflectConfig {
	d := ReflectConfigFrom(config.Default().Reflection)
	if r.MaxChecks == 0 {
		r.MaxChecks = d.MaxChecks
	}
	if r.PivotalImportance == 0 {
		r.PivotalImportance = d.PivotalImportance
	}
	return r
}

// ReflectStore is what reflection needs of the store; *models.Store
// satisfies it.
type ReflectStore interface {
	RecordStore
	UnrecordedTurns(ctx context.Context, chatID string, atMost int) (int, error)
	ReflectionScene(ctx context.Context, chatID string) (models.ChatScene, error)
	ReflectionState(ctx context.Context, chatID string) (models.ReflectionState, error)
	SaveReflectionState(ctx context.Context, state models.ReflectionState) error
	ReflectionCandidates(ctx context.Context, spaceID string) ([]models.ReflectionCandidate, error)
	LoadReflection(ctx context.Context, spaceID, character string, limit int) (models.ReflectionRound, error)
	BeliefEvidence(ctx context.Context, ids []string) (map[string][]belief.Evidence, error)
	BeliefLinksTo(ctx context.Context, ids, to []string) (map[string][]belief.Evidence, error)
	InstallReflection(ctx context.Context, r models.ReflectionInstall) error
}

// Reflect runs the chat's reflection: the recorder first when turns wait
// unrecorded, then the trigger (manual: every cast member with something
// new), then per character the belief checks, the reflection request (one
// repair on an answer that is not the contract), validation and one
// install. A character that fails stays owed while the others complete;
// the run is then recorded as failed with the characters' reasons.
func (s *Service) Reflect(ctx context.Context, chatID string, manual bool) (Result, error) {
	res, err := s.reflectChat(ctx, chatID, manual)
	s.wroteItems(ctx, chatID, res, err)
	return s.record(ctx, KindReflect, chatID, res, err)
}

// recordFirst records the chat's owed turns under the lock a record job
// holds for it, so a reflection never races the queue's recorder over the
// same events (each would see the other's seal as a stale batch).
func (s *Service) recordFirst(ctx context.Context, chatID string) error {
	unlock, err := s.lock(ctx, JobLockKey(KindRecord, chatID))
	if err != nil {
		return err
	}
	defer unlock()
	_, err = s.Record(ctx, chatID)
	return err
}

func (s *Service) reflectChat(ctx context.Context, chatID string, manual bool) (Result, error) {
	rs, ok := s.store.(ReflectStore)
	if !ok {
		return Result{Outcome: Skipped, Reason: "the store keeps no beliefs"}, nil
	}
	// An automatic run that is not due ends before recording anything: the
	// chat's newest turns wait for the recorder's own batch. Recording them
	// first on every check (one after each record) made a busy chat's
	// recorder run again on one or two turns (about a tenth of troupe
	// bench's recorder calls). The turns and scene decide here; the new
	// perceptions were counted when the run was found owed
	// (ReflectionOwed), and are counted again under the lock.
	if !manual {
		if _, skip, err := s.planReflection(ctx, rs, chatID, false, false); err != nil || skip != "" {
			return Result{Outcome: Skipped, Reason: skip}, err
		}
	}
	if n, err := rs.UnrecordedTurns(ctx, chatID, 2); err == nil && n > 1 {
		if err := s.recordFirst(ctx, chatID); err != nil {
			return Result{}, fmt.Errorf("memory: reflect: record first: %w", err)
		}
	}
	chat, err := s.store.Chat(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	// The space's characters and beliefs are shared by its chats: one
	// reflection of a space at a time, decided on what the last one left.
	unlock, err := s.lock(ctx, spaceReflectionLock(chat.SpaceID))
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	plan, skip, err := s.planReflection(ctx, rs, chatID, manual, true)
	if err != nil || skip != "" {
		return Result{Outcome: Skipped, Reason: skip}, err
	}
	sc, prev, d, lang, cardOf := plan.scene, plan.state, plan.decision, plan.lang, plan.cardOf
	var done, failed []string
	for _, name := range d.Characters {
		n, notes, err := s.reflectCharacter(ctx, rs, sc.Chat, cardOf[name], lang, name)
		switch {
		case errors.Is(err, models.ErrChatGone):
			return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
		case errors.Is(err, models.ErrStale):
			// Another run reflected on these perceptions meanwhile, or a
			// belief went: the next run starts from what is there.
			done = append(done, name+": changed meanwhile, left for the next run")
		case err != nil:
			s.logFailure("reflection failed", err, "chat_id", chatID, "character", name)
			failed = append(failed, name+": "+reasonOf(err))
		default:
			done = append(done, fmt.Sprintf("%s: %d changes", name, n)+notesReason(notes))
		}
	}
	if len(failed) > 0 {
		// The chat's state stays: the job's retry decides the same way and
		// runs the characters still owed (the others have nothing new).
		return Result{}, &RejectedError{Kind: KindReflect, Reason: strings.Join(append(failed, done...), "; ")}
	}
	next := models.ReflectionState{ChatID: chatID, LastSeq: sc.Turns, LastAutoSeq: prev.LastAutoSeq, Place: sc.Place, Day: sc.Day}
	if !manual {
		next.LastAutoSeq = sc.Turns
	}
	if err := rs.SaveReflectionState(ctx, next); err != nil {
		return Result{}, err
	}
	reason := fmt.Sprintf("%s: %s", d.Why, strings.Join(done, "; "))
	return Result{Outcome: Written, Product: chatID, Reason: reason}, nil
}

// reasonOf is an error's reason without story text (the engine's and the
// validators' reasons quote none) or a provider's (a failed call is told
// by its Fault).
func reasonOf(err error) string {
	var rej *RejectedError
	if errors.As(err, &rej) {
		return rej.Reason
	}
	return FaultOf(err).String()
}

// notesReason words what the engine corrected, dropped or refused in a
// character's answer for the job record, as the recorder's drops are
// (shownItems): the items and rules, never the story's words.
func notesReason(notes []belief.Note) string {
	if len(notes) == 0 {
		return ""
	}
	return " (" + shownItems(notes) + ")"
}

// reflectCharacter runs one character's reflection and installs it; it
// returns how many beliefs changed and the notes on the answer's items the
// engine corrected, dropped or refused.
func (s *Service) reflectCharacter(ctx context.Context, rs ReflectStore, chat models.Chat, cardID, lang, name string) (int, []belief.Note, error) {
	round, err := rs.LoadReflection(ctx, chat.SpaceID, name, belief.DefaultPromptPerceptions)
	if err != nil {
		return 0, nil, err
	}
	shown := belief.Batch(round.New, 0)
	if len(shown) == 0 {
		return 0, nil, nil
	}
	// The checks and the request's beliefs weigh words over the same
	// texts (the checks change no belief's text or names): count them once.
	corpus := belief.CorpusOf(belief.CheckInput{Beliefs: round.Beliefs, New: shown, Known: round.Known})
	checks := belief.SelectChecks(belief.CheckInput{Beliefs: round.Beliefs, New: shown, Corpus: corpus, Max: s.cfg.Reflect.MaxChecks})
	// The round's beliefs come without their evidence: read their links
	// to the shown perceptions (all that checks and validation consult,
	// and all an install adds to) for the checked ones, and below for the
	// ones the request shows; a merge reads its beliefs' links whole.
	to := make([]string, len(shown))
	for i, p := range shown {
		to[i] = p.ID
	}
	evidence := map[string][]belief.Evidence{}
	checked := make([]string, len(checks))
	for i, c := range checks {
		checked[i] = c.Belief.ID
	}
	if err := s.withEvidence(ctx, rs, round.Beliefs, checked, to, evidence); err != nil {
		return 0, nil, err
	}
	results, err := s.askChecks(ctx, lang, name, checks)
	if err != nil {
		return 0, nil, err
	}
	beliefs, doubted := belief.ApplyChecks(round.Beliefs, results)
	// The oldest new perceptions that fit one call are reflected on; the
	// rest stay new for the next run. The run's prompt is the one askBatch
	// built last; the evidence of the beliefs it shows is read as they are
	// chosen (once per belief, however often the batch is sized).
	var shownBeliefs []belief.Belief
	var msgs []belief.Message
	var evErr error
	build := func(k int) batch {
		shownBeliefs = slices.Clone(belief.PromptBeliefs(belief.CheckInput{Beliefs: beliefs, New: shown[:k], Corpus: corpus}, 0))
		ids := make([]string, len(shownBeliefs))
		for i, b := range shownBeliefs {
			ids[i] = b.ID
		}
		if err := s.withEvidence(ctx, rs, shownBeliefs, ids, to, evidence); err != nil && evErr == nil {
			evErr = err
		}
		for i := range shownBeliefs {
			// Read by an earlier sizing of this batch: the clone above
			// came from beliefs, which does not hold it.
			if ev, ok := evidence[shownBeliefs[i].ID]; ok && shownBeliefs[i].Evidence == nil {
				shownBeliefs[i].Evidence = slices.Clone(ev)
			}
		}
		msgs = belief.Prompt(belief.PromptInput{Language: lang, Character: name, Perceptions: shown[:k], Beliefs: shownBeliefs})
		var material strings.Builder
		for _, p := range shown[:k] {
			material.WriteString(p.Text)
		}
		return batch{prompt: fromReflect(msgs), material: material.String()}
	}
	a, k, err := askBatch(s, KindReflect, len(shown), build, func([]prompt.Message) (belief.Answer, error) {
		if evErr != nil {
			return belief.Answer{}, evErr
		}
		return s.askReflection(ctx, lang, name, msgs)
	})
	if err != nil {
		return 0, nil, err
	}
	shown = shown[:k]
	if err := wholeMerged(ctx, rs, shownBeliefs, a.Merge); err != nil {
		return 0, nil, err
	}
	doubtedIDs := make([]string, len(doubted))
	for i, b := range doubted {
		doubtedIDs[i] = b.ID
	}
	changes, notes := belief.Validate(belief.Round{Perceptions: shown, Beliefs: shownBeliefs, Doubted: doubtedIDs,
		PivotalImportance: s.cfg.Reflect.PivotalImportance, NewID: models.NewID}, a)
	for _, n := range notes {
		s.log.Info("reflection item", "character", name, "note", n.String())
	}
	seen := make([]string, len(shown))
	for i, p := range shown {
		seen[i] = p.ID
	}
	err = rs.InstallReflection(ctx, models.ReflectionInstall{ChatID: chat.ID, CardID: cardID, SpaceID: chat.SpaceID,
		Character: name, Seen: seen, Doubted: doubted, Changes: changes, Read: evidence, Partial: true})
	if err != nil {
		return 0, nil, err
	}
	return len(doubted) + len(changes.Created) + len(changes.Updated) + len(changes.Deleted), notes, nil
}

// askChecks asks the scribe the round's belief checks, all at once: each
// is one belief against the new perceptions, answered without the others,
// and a space's reflections run one at a time, so checks asked one after
// another held every other chat's reflection of the space for their sum
// (five calls of a real model, some seconds each). The results keep the
// checks' order. A check too long for the scribe, or answered outside the
// contract, changes nothing; any other failure fails the round.
func (s *Service) askChecks(ctx context.Context, lang, name string, checks []belief.Check) ([]belief.CheckResult, error) {
	answers := make([]*belief.CheckAnswer, len(checks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(checksAtOnce)
	for i, c := range checks {
		g.Go(func() error {
			answer, err := s.completeJSON(gctx, KindBeliefCheck, fromReflect(belief.CheckPrompt(lang, c)))
			if IsTooLong(err) {
				// One belief and its perceptions do not fit the scribe:
				// as a check not answered by the contract.
				s.log.Warn("belief check longer than the scribe's window; skipped", "character", name)
				return nil
			}
			if err != nil {
				return fmt.Errorf("memory: belief check: scribe: %w", err)
			}
			a, err := belief.ParseCheck(answer)
			if err != nil {
				// The reflection request still sees the belief.
				s.log.Warn("belief check answer dropped", "character", name, "reason", err.Error())
				return nil
			}
			answers[i] = &a
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var results []belief.CheckResult
	for i, a := range answers {
		if a != nil {
			results = append(results, belief.CheckResult{Check: checks[i], Answer: *a})
		}
	}
	return results, nil
}

// checksAtOnce bounds the belief checks of a round asked at once, for a
// reflection.max_checks set high: a provider's rate limit counts them.
const checksAtOnce = 8

// askReflection asks the scribe for a character's reflection: one call,
// and one repair when the answer is not the contract.
func (s *Service) askReflection(ctx context.Context, lang, name string, msgs []belief.Message) (belief.Answer, error) {
	answer, err := s.completeJSON(ctx, KindReflect, fromReflect(msgs))
	if err != nil {
		return belief.Answer{}, fmt.Errorf("memory: reflect: scribe: %w", err)
	}
	a, perr := belief.ParseAnswer(answer)
	if perr != nil {
		s.log.Warn("reflection answer rejected; asking for a repair", "character", name, "reason", perr.Error())
		answer, err = s.completeJSON(ctx, KindReflect, fromReflect(belief.RepairPrompt(lang, msgs, answer, perr)))
		if err != nil {
			return belief.Answer{}, fmt.Errorf("memory: reflect: scribe repair: %w", err)
		}
		if a, perr = belief.ParseAnswer(answer); perr != nil {
			return belief.Answer{}, &RejectedError{Kind: KindReflect, Reason: perr.Error()}
		}
	}
	return a, nil
}

// wholeMerged gives the beliefs of bs that merges name all their links:
// a merged belief carries them all, and may say Sure only when they
// span two turns. The round read only their links to its perceptions
// (and may have added some): the rest are added to those.
func wholeMerged(ctx context.Context, rs ReflectStore, bs []belief.Belief, merges []belief.Merge) error {
	named := map[string]bool{}
	for _, m := range merges {
		for _, id := range m.Beliefs {
			named[id] = true
		}
	}
	var ids []string
	for _, b := range bs {
		if named[b.ID] {
			ids = append(ids, b.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	all, err := rs.BeliefEvidence(ctx, ids)
	if err != nil {
		return err
	}
	for i := range bs {
		ev, ok := all[bs[i].ID]
		if !ok {
			continue
		}
		for _, e := range bs[i].Evidence {
			if !slices.ContainsFunc(ev, func(h belief.Evidence) bool { return h.Perception == e.Perception && h.Stance == e.Stance }) {
				ev = append(ev, e)
			}
		}
		bs[i].Evidence = ev
	}
	return nil
}

// withEvidence reads the links to the perceptions to of the beliefs ids
// that read has not got yet, keeps them in read, and sets them on those
// beliefs of bs. A belief whose evidence was read before keeps the
// evidence it has in bs (a check may have added a contradiction to it).
func (s *Service) withEvidence(ctx context.Context, rs ReflectStore, bs []belief.Belief, ids, to []string, read map[string][]belief.Evidence) error {
	var want []string
	for _, id := range ids {
		if _, ok := read[id]; !ok {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	ev, err := rs.BeliefLinksTo(ctx, want, to)
	if err != nil {
		return err
	}
	fresh := make(map[string]bool, len(want))
	for _, id := range want {
		read[id], fresh[id] = ev[id], true
	}
	for i := range bs {
		if fresh[bs[i].ID] {
			bs[i].Evidence = slices.Clone(ev[bs[i].ID])
		}
	}
	return nil
}

func fromReflect(ms []belief.Message) []prompt.Message {
	out := make([]prompt.Message, len(ms))
	for i, m := range ms {
		out[i] = prompt.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// reflectionPlan is what the trigger decided for a chat, with what it read.
type reflectionPlan struct {
	scene    models.ChatScene
	state    models.ReflectionState
	decision belief.Decision
	lang     string
	cardOf   map[string]string
}

// planReflection reads a chat's scene, its last reflection and the space's
// characters with new perceptions, and decides. skip says why nothing runs.
// Without count it decides by the turns and scene alone (belief.Due) and
// returns no decision.
func (s *Service) planReflection(ctx context.Context, rs ReflectStore, chatID string, manual, count bool) (reflectionPlan, string, error) {
	var plan reflectionPlan
	sc, err := rs.ReflectionScene(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return plan, "chat no longer exists", nil
	}
	if err != nil {
		return plan, "", err
	}
	prev, err := rs.ReflectionState(ctx, chatID)
	if err != nil {
		return plan, "", err
	}
	in := belief.TriggerInput{Turn: sc.Turns, LastTurn: prev.LastSeq, LastAutoTurn: prev.LastAutoSeq, Manual: manual,
		Scene: belief.Scene{Place: sc.Place, Day: sc.Day}, LastScene: belief.Scene{Place: prev.Place, Day: prev.Day}, Within: sc.Within}
	// Counting the space's new perceptions reads all of them (a busy
	// space's backlog, 4 ms at 1,600): only when the turns say a run is due.
	if _, due := belief.Due(s.cfg.Reflect.Trigger, in); !manual && !due {
		return plan, "no reflection due", nil
	}
	if !count {
		return plan, "", nil
	}
	cands, err := rs.ReflectionCandidates(ctx, sc.Chat.SpaceID)
	if err != nil {
		return plan, "", err
	}
	lang, _ := s.cardLanguage(ctx, sc.Chat.CardID)
	cardOf := map[string]string{}
	for _, c := range cands {
		role := belief.Background
		switch {
		case c.Kind == models.CharacterPlayer:
			role = belief.Player
		case c.Kind == models.CharacterCast:
			role = belief.Cast
		}
		cardOf[c.Name] = c.CardID
		in.Candidates = append(in.Candidates, belief.Candidate{Name: c.Name, Role: role, New: c.New})
	}
	d := belief.Decide(s.cfg.Reflect.Trigger, in)
	if !d.Run {
		return plan, "no reflection due", nil
	}
	return reflectionPlan{scene: sc, state: prev, decision: d, lang: lang, cardOf: cardOf}, "", nil
}

// ReflectionOwed reports whether the chat's automatic reflection is due
// now (the sweeper's question; the recorder's own runs are not counted).
func (s *Service) ReflectionOwed(ctx context.Context, chat models.Chat) (bool, error) {
	rs, ok := s.store.(ReflectStore)
	if !ok {
		return false, nil
	}
	_, skip, err := s.planReflection(ctx, rs, chat.ID, false, true)
	return err == nil && skip == "", err
}
