package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"troupe/models"
	"troupe/prompt"
	"troupe/record"
	"troupe/usage"
)

// JSONScribe is a scribe that can ask its endpoint for a JSON object
// (response_format json_object); the recorder uses it when the scribe has it.
type JSONScribe interface {
	CompleteJSON(ctx context.Context, msgs []prompt.Message) (string, error)
}

// KindRecord is the recorder's job kind.
const KindRecord = models.JobKindRecord

// RecordStore is what the recorder needs of the store beyond Store;
// *models.Store satisfies it.
type RecordStore interface {
	RecordBatch(ctx context.Context, chatID string) (models.RecordBatch, error)
	InstallRecord(ctx context.Context, r models.RecordInstall) error
}

// Record runs the recorder for the chat: the unsealed events of the turns
// of its current branch that a later user message follows go to the scribe
// in one request, whatever the number of characters present. An answer
// that is not the contract gets one repair; a second one writes nothing and
// the work stays owed (a *RejectedError). Otherwise each item that breaks a
// rule is dropped with its reason, and the rest is installed in one
// transaction with the events sealed; the result, the dropped items' reasons
// included, is recorded in the job table.
func (s *Service) Record(ctx context.Context, chatID string) (Result, error) {
	res, err := s.recordChat(ctx, chatID)
	s.wroteItems(ctx, chatID, res, err)
	return s.record(ctx, KindRecord, chatID, res, err)
}

func (s *Service) recordChat(ctx context.Context, chatID string) (Result, error) {
	rs, ok := s.store.(RecordStore)
	if !ok {
		return Result{Outcome: Skipped, Reason: "the store keeps no record"}, nil
	}
	var res Result
	batches, stale := 0, 0
	for {
		r, more, err := s.recordOnce(ctx, rs, chatID)
		if errors.Is(err, models.ErrStale) {
			if stale++; stale == 3 {
				return Result{}, ErrStaleRetries
			}
			continue
		}
		if err != nil || r.Outcome != Written {
			if batches > 0 {
				// The slices sealed stand; the rest stays owed.
				return res, err
			}
			return r, err
		}
		res, batches = r, batches+1
		if !more {
			if batches > 1 {
				res.Reason += fmt.Sprintf(" (%d slices)", batches)
			}
			return res, nil
		}
	}
}

// recordOnce records the oldest turns of the chat's owed events that fit
// one scribe call (all of them when they do); more says turns remain.
func (s *Service) recordOnce(ctx context.Context, rs RecordStore, chatID string) (Result, bool, error) {
	all, err := rs.RecordBatch(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	if len(all.Events) == 0 {
		return Result{Outcome: Skipped, Reason: "nothing to record"}, false, nil
	}
	lang, castName := s.cardLanguage(ctx, all.Chat.CardID)
	cast := []models.CastMember{{ChatID: chatID, CardID: all.Chat.CardID, Name: castName}}
	// Every member is cast, present or not: presence decides who perceives
	// what. A member goes by its name in the space, which is the card's
	// only while no other card of the space has it.
	members, err := s.store.Cast(ctx, chatID, true)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return Result{}, false, err
	}
	if len(members) > 0 {
		cast = members
	}
	// A slice is whole turns: ends[k-1] events make k turns.
	var ends []int
	for i, e := range all.Events {
		if i > 0 && e.Seq != all.Events[i-1].Seq {
			ends = append(ends, i)
		}
	}
	ends = append(ends, len(all.Events))
	// The slice askBatch sends is the one it built last.
	var (
		b    models.RecordBatch
		in   record.Input
		full map[string]string
	)
	build := func(k int) batch {
		b = all
		b.Events = all.Events[:ends[k-1]]
		in = RecorderInput(b, cast)
		in.Fading = s.cfg.Fading
		full = shortenIDs(&in)
		prompt := toMessages(record.Prompt(lang, in))
		return batch{prompt: prompt, material: eventsText(in)}
	}
	rec, k, err := askBatch(s, KindRecord, len(ends), build, func([]prompt.Message) (record.Record, error) {
		return s.askRecorder(ctx, lang, in)
	})
	if err != nil {
		return Result{}, false, err
	}
	unalias(&rec, full)
	inst := recordInstall(b, in, rec, cast)
	if members != nil {
		inst.Views = memberLedgers(b, in, rec, members)
	}
	s.castAliases(ctx, inst.Characters)
	err = rs.InstallRecord(ctx, inst)
	if errors.Is(err, models.ErrChatGone) {
		return Result{Outcome: Skipped, Reason: ReasonForgotten}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	turns := map[int64]bool{}
	for _, e := range b.Events {
		turns[e.Seq] = true
	}
	last := b.Events[len(b.Events)-1].ID
	return Result{Outcome: Written, Product: last,
		Reason: fmt.Sprintf("sealed %d events of %d turns; %d perceptions, %d changes", len(b.Events), len(turns), len(inst.Perceptions), len(inst.Changes)) +
			dropsReason(rec.Drops)}, k < len(ends), nil
}

// eventsText is the events' text, the material a recorder slice carries.
func eventsText(in record.Input) string {
	var t strings.Builder
	for _, e := range in.Events {
		t.WriteString(e.Text)
		t.WriteByte('\n')
	}
	return t.String()
}

// askRecorder asks the scribe for the batch's record: one call, and one
// repair when the answer is not the contract at all. An answer that is the
// contract is then validated item by item: a bad item is dropped with its
// reason (in the record's Drops) and the rest stands; no repair is asked
// for a bad item. A repaired answer that is still not the contract is a
// *RejectedError: nothing is written and the work stays owed.
func (s *Service) askRecorder(ctx context.Context, lang string, in record.Input) (record.Record, error) {
	msgs := toMessages(record.Prompt(lang, in))
	answer, err := s.completeJSON(ctx, KindRecord, msgs)
	if err != nil {
		return record.Record{}, fmt.Errorf("memory: record: scribe: %w", err)
	}
	a, problem := record.ParseAnswer(answer)
	if problem != nil {
		s.log.Warn("recorder answer is not the contract; asking for a repair", "reason", problem.Error())
		repair := append(append([]prompt.Message(nil), msgs...),
			prompt.Message{Role: prompt.RoleAssistant, Content: answer},
			prompt.Message{Role: prompt.RoleUser, Content: record.RepairMessage(lang, problem)})
		answer, err = s.completeJSON(ctx, KindRecord, repair)
		if err != nil {
			return record.Record{}, fmt.Errorf("memory: record: scribe repair: %w", err)
		}
		if a, problem = record.ParseAnswer(answer); problem != nil {
			return record.Record{}, &RejectedError{Kind: KindRecord, Reason: problem.Error()}
		}
	}
	rec := record.Validate(in, a)
	for _, d := range rec.Drops {
		s.log.Info("recorder item dropped", "item", d.String())
	}
	return rec, nil
}

func (s *Service) completeJSON(ctx context.Context, kind string, msgs []prompt.Message) (string, error) {
	ctx = usage.WithKind(ctx, kind)
	if js, ok := s.scribe.(JSONScribe); ok {
		defer waiting(ctx)()
		return js.CompleteJSON(ctx, msgs)
	}
	return s.complete(ctx, msgs)
}

// dropsReason words the dropped items of a record for the job record: the
// sections, items and rules, never the story's words (shownItems).
func dropsReason(drops []record.Drop) string {
	if len(drops) == 0 {
		return ""
	}
	return fmt.Sprintf("; dropped %d items: %s", len(drops), shownItems(drops))
}

// shownItems joins at most maxDropsShown items for a job record, then says
// how many more there were.
func shownItems[T fmt.Stringer](items []T) string {
	parts := make([]string, 0, min(len(items), maxDropsShown+1))
	for i, it := range items {
		if i == maxDropsShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-i))
			break
		}
		parts = append(parts, it.String())
	}
	return strings.Join(parts, "; ")
}

// maxDropsShown bounds the dropped items a job record names.
const maxDropsShown = 8

// castAliases sets each cast character's aliases from its card: the
// card's display name when the character goes by another in the space
// (another card has the name: "Wren (wren-png)"), and the nickname that
// {{char}} becomes when it differs from the card's name. A card that
// cannot be read gives none.
func (s *Service) castAliases(ctx context.Context, chars []models.Character) {
	for i, c := range chars {
		if c.Kind != models.CharacterCast || c.CardID == "" {
			continue
		}
		row, err := s.store.Card(ctx, c.CardID)
		if err != nil {
			continue
		}
		var card struct {
			Nickname string `json:"nickname"`
		}
		if json.Unmarshal([]byte(row.Data), &card) != nil {
			continue
		}
		var aliases []string
		if row.Name != "" && row.Name != c.Name {
			aliases = append(aliases, row.Name)
		}
		if nick := models.FitName(strings.TrimSpace(card.Nickname), models.NameSize); nick != "" && nick != c.Name && nick != row.Name {
			aliases = append(aliases, nick)
		}
		chars[i].Aliases = strings.Join(aliases, "\n")
	}
}
