package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"troupe/memory/record"
	"troupe/models"
)

// JSONScribe is a scribe that can ask its endpoint for a JSON object
// (response_format json_object); the recorder uses it when the scribe has it.
type JSONScribe interface {
	CompleteJSON(ctx context.Context, msgs []Message) (string, error)
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
	return s.record(ctx, KindRecord, chatID, res, err)
}

func (s *Service) recordChat(ctx context.Context, chatID string) (Result, error) {
	rs, ok := s.store.(RecordStore)
	if !ok {
		return Result{Outcome: Skipped, Reason: "the store keeps no record"}, nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		res, err := s.recordOnce(ctx, rs, chatID)
		if errors.Is(err, models.ErrStale) {
			continue
		}
		return res, err
	}
	return Result{}, ErrStaleRetries
}

func (s *Service) recordOnce(ctx context.Context, rs RecordStore, chatID string) (Result, error) {
	b, err := rs.RecordBatch(ctx, chatID)
	if errors.Is(err, models.ErrNotFound) {
		return Result{Outcome: Skipped, Reason: "chat no longer exists"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if len(b.Events) == 0 {
		return Result{Outcome: Skipped, Reason: "nothing to record"}, nil
	}
	lang, castName := s.cardLanguage(ctx, b.Chat.CardID)
	in := RecorderInput(b, castName)
	full := shortenIDs(&in)
	rec, err := s.askRecorder(ctx, lang, in)
	if err != nil {
		return Result{}, err
	}
	unalias(&rec, full)
	inst := recordInstall(b, in, rec, castName)
	err = rs.InstallRecord(ctx, inst)
	if errors.Is(err, models.ErrChatGone) {
		return Result{Outcome: Skipped, Reason: ReasonForgotten}, nil
	}
	if err != nil {
		return Result{}, err
	}
	turns := map[int64]bool{}
	for _, e := range b.Events {
		turns[e.Seq] = true
	}
	last := b.Events[len(b.Events)-1].ID
	return Result{Outcome: Written, Product: last,
		Reason: fmt.Sprintf("sealed %d events of %d turns; %d perceptions, %d changes", len(b.Events), len(turns), len(inst.Perceptions), len(inst.Changes)) +
			dropsReason(rec.Drops)}, nil
}

// RecorderInput turns a stored batch into the recorder's input: the cast
// (the chat's card), the players present, the ledger, the open threads, the
// known entities the batch mentions, and the events with who was present.
func RecorderInput(b models.RecordBatch, castName string) record.Input {
	in := record.Input{Cast: []record.CastMember{{Name: castName}}, Last: record.StoryTime{Day: record.Int(b.LastDay), Minute: record.Int(b.LastMinute)}}
	if b.Ledger != "" {
		_ = json.Unmarshal([]byte(b.Ledger), &in.Ledger)
	}
	players := map[string]bool{}
	var text strings.Builder
	for _, e := range b.Events {
		present := b.Present[e.MessageID]
		for _, p := range present {
			if p != castName && !players[p] {
				players[p] = true
				in.Players = append(in.Players, p)
			}
		}
		in.Events = append(in.Events, record.Event{ID: e.ID, Turn: int(e.Seq), Actor: e.Actor, Kind: record.Kind(e.Kind), Text: e.Text, Present: present})
		text.WriteString(strings.ToLower(e.Text))
		text.WriteByte('\n')
	}
	sort.Strings(in.Players)
	for _, t := range b.Threads {
		in.Threads = append(in.Threads, record.OpenThread{ID: t.ID, Kind: t.Kind, Text: t.Text})
	}
	all := text.String()
	for _, e := range b.Entities {
		if mentioned(all, e) {
			in.Entities = append(in.Entities, record.Entity{Name: e.Name, Kind: e.Kind, Within: e.Within})
		}
	}
	return in
}

// askRecorder asks the scribe for the batch's record: one call, and one
// repair when the answer is not the contract at all. An answer that is the
// contract is then validated item by item: a bad item is dropped with its
// reason (in the record's Drops) and the rest stands; no repair is asked
// for a bad item. A repaired answer that is still not the contract is a
// *RejectedError: nothing is written and the work stays owed.
func (s *Service) askRecorder(ctx context.Context, lang string, in record.Input) (record.Record, error) {
	prompt := toMessages(record.Prompt(lang, in))
	answer, err := s.completeJSON(ctx, prompt)
	if err != nil {
		return record.Record{}, fmt.Errorf("memory: record: scribe: %w", err)
	}
	a, problem := record.ParseAnswer(answer)
	if problem != nil {
		s.log.Warn("recorder answer is not the contract; asking for a repair", "reason", problem.Error())
		repair := append(append([]Message(nil), prompt...),
			Message{Role: RoleAssistant, Content: answer},
			Message{Role: RoleUser, Content: record.RepairMessage(lang, problem)})
		answer, err = s.completeJSON(ctx, repair)
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

func (s *Service) completeJSON(ctx context.Context, msgs []Message) (string, error) {
	if js, ok := s.scribe.(JSONScribe); ok {
		return js.CompleteJSON(ctx, msgs)
	}
	return s.scribe.Complete(ctx, msgs)
}

// dropsReason words the dropped items of a record for the job record: the
// sections, items and rules, never the story's words, at most
// maxDropsShown of them.
func dropsReason(drops []record.Drop) string {
	if len(drops) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(drops), maxDropsShown+1))
	for i, d := range drops {
		if i == maxDropsShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(drops)-i))
			break
		}
		parts = append(parts, d.String())
	}
	return fmt.Sprintf("; dropped %d items: %s", len(drops), strings.Join(parts, "; "))
}

// maxDropsShown bounds the dropped items a job record names.
const maxDropsShown = 8

func toMessages(ms []record.Message) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// shortenIDs replaces the ids the prompt shows (events, threads) by the
// shortest suffixes that stay unique in the batch: a 26-character id costs
// some 15 tokens each time the prompt or the answer names it. It returns
// the map back to the full ids.
func shortenIDs(in *record.Input) map[string]string {
	var ids []string
	for _, e := range in.Events {
		ids = append(ids, e.ID)
	}
	for _, t := range in.Threads {
		ids = append(ids, t.ID)
	}
	short := map[string]string{}
	for n := 5; ; n++ {
		clear(short)
		unique := true
		for _, id := range ids {
			k := id
			if len(id) > n {
				k = id[len(id)-n:]
			}
			if _, dup := short[k]; dup {
				unique = false
				break
			}
			short[k] = id
		}
		if unique || n >= 26 {
			break
		}
	}
	back := map[string]string{}
	for k, id := range short {
		back[id] = k
	}
	for i := range in.Events {
		in.Events[i].ID = back[in.Events[i].ID]
	}
	for i := range in.Threads {
		in.Threads[i].ID = back[in.Threads[i].ID]
	}
	return short
}

// unalias turns the short ids of a validated record back into full ones
// (validation accepted only ids the batch showed).
func unalias(rec *record.Record, full map[string]string) {
	id := func(s string) string {
		if f, ok := full[s]; ok {
			return f
		}
		return s
	}
	for i := range rec.Events {
		rec.Events[i].Event = id(rec.Events[i].Event)
	}
	for i := range rec.Perceptions {
		rec.Perceptions[i].Event, rec.Perceptions[i].Via = id(rec.Perceptions[i].Event), id(rec.Perceptions[i].Via)
	}
	for i := range rec.Threads {
		rec.Threads[i].Event, rec.Threads[i].Thread = id(rec.Threads[i].Event), id(rec.Threads[i].Thread)
	}
	for i := range rec.Relationships {
		rec.Relationships[i].Event = id(rec.Relationships[i].Event)
	}
	for i := range rec.Knowledge {
		rec.Knowledge[i].Event = id(rec.Knowledge[i].Event)
	}
}

// mentioned reports whether text (lower case) names the entity or one of
// its aliases.
func mentioned(text string, e models.Entity) bool {
	for _, n := range append([]string{e.Name}, strings.Split(e.Aliases, "\n")...) {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && strings.Contains(text, n) {
			return true
		}
	}
	return false
}
