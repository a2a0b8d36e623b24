package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// PromptTrace is the prompt one reply was built from, kept for the web
// inspector (web.prompts of a chat's latest replies): its blocks in the
// order they were sent, with their tokens, and the items recall showed,
// with their scores and why they were picked.
//
// A trace holds words of other chats than its own: the resident summary
// carries what the card's handbook took from every chat of the space,
// recall shows perceptions and beliefs of other chats, the scene
// relationships other chats wrote. The chats whose words it may hold are
// filed with it (PromptTraceItem), from the stored rows when it is written,
// and forgetting any of them deletes it whole.
type PromptTrace struct {
	// MessageID is the reply's; ParentID the message it answers, under
	// which RecallDiagnostics files the turn's recall.
	MessageID string `gorm:"primaryKey;size:26" json:"message_id"`
	ParentID  string `gorm:"size:26;not null;default:''" json:"parent_id"`
	ChatID    string `gorm:"size:26;not null;index:idx_prompt_trace_chat,priority:1" json:"chat_id"`
	CardID    string `gorm:"size:64;not null;index:idx_prompt_trace_card,priority:1" json:"card_id"`
	SpaceID   string `gorm:"size:128;not null" json:"space_id"`
	Character string `gorm:"column:character_name;size:200;not null" json:"character"`
	Model     string `gorm:"size:200;not null;default:''" json:"model"`
	// EstimatedTokens is the pipeline's count of the whole prompt;
	// ReportedTokens the provider's, 0 when it reported none.
	EstimatedTokens int `gorm:"not null;default:0" json:"estimated_tokens"`
	ReportedTokens  int `gorm:"not null;default:0" json:"reported_tokens"`
	// Recall is how the turn's recall went (full, fewer, cached, late,
	// failed); "" when it had none.
	Recall    string    `gorm:"size:16;not null;default:''" json:"recall"`
	CreatedAt time.Time `gorm:"index:idx_prompt_trace_chat,priority:2;index:idx_prompt_trace_card,priority:2" json:"created_at"`
	// Data holds Blocks and Items as JSON; ChatPromptTraces does not read it.
	Data string `gorm:"type:text;not null" json:"-"`

	Blocks []PromptBlock      `gorm:"-" json:"blocks"`
	Items  []PromptRecallItem `gorm:"-" json:"items"`
	// Lore lists the lorebook entries the turn's activation put in the
	// prompt, in placement order.
	Lore []PromptLore `gorm:"-" json:"lore,omitempty"`
	// Sources are the chats whose words the trace may hold, its own first
	// (filed from the stored rows).
	Sources []string `gorm:"-" json:"sources"`
}

// PromptBlock is one part of a traced prompt (prompt.Block): its kind
// (character, conventions, summary, resident, players, injection,
// kept_recall, recall, scene, history, new, post_history), a short label,
// the prompt message it is part of and that message's role, its tokens by
// the pipeline's count, and its text. Ref is the stored message a history
// block shows.
type PromptBlock struct {
	Kind    string `json:"kind"`
	Label   string `json:"label"`
	Message int    `json:"message"`
	Role    string `json:"role"`
	Tokens  int    `json:"tokens"`
	Ref     string `json:"ref,omitempty"`
	Text    string `json:"text"`
}

// PromptLore is a lorebook entry a traced prompt holds: its book, its
// uid in the book, its comment (the name authors give it) and its tokens.
type PromptLore struct {
	Book    string `json:"book"`
	UID     string `json:"uid"`
	Comment string `json:"comment,omitempty"`
	Tokens  int    `json:"tokens"`
}

// PromptRecallItem is an item of a traced prompt's recall: a perception
// ("p") or belief ("b") of the speaking character, the block it is shown
// in (recall, or kept_recall when an earlier turn's kept block shows it),
// and for this turn's items the scores recall gave it and why it was
// picked.
type PromptRecallItem struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind,omitempty"`
	Block      string  `json:"block"`
	Importance float64 `json:"importance,omitempty"`
	Relevance  float64 `json:"relevance,omitempty"`
	Recency    float64 `json:"recency,omitempty"`
	Retention  float64 `json:"retention,omitempty"`
	Total      float64 `json:"total,omitempty"`
	Faded      bool    `json:"faded,omitempty"`
	Why        string  `json:"why,omitempty"`
}

// PromptTraceItem files a trace under a chat whose words it may hold, and
// under the recall item that brought them (ItemID "" for the resident and
// the scene). Filed from the stored rows, never from the trace's text.
type PromptTraceItem struct {
	MessageID string `gorm:"primaryKey;size:26" json:"message_id"`
	ItemID    string `gorm:"primaryKey;size:26;index" json:"item_id"`
	FromChat  string `gorm:"primaryKey;size:26;index" json:"from_chat"`
	ChatID    string `gorm:"size:26;not null;index" json:"chat_id"`
}

// PromptTraceWrite is a trace to store, with what it shows that other
// chats wrote: ShowsResident and ShowsScene say whether the prompt carried
// the resident summary and the scene (their chats are read from the
// manifest of CardIDs in the space and from the character's relationships
// and knowledge).
type PromptTraceWrite struct {
	Trace         PromptTrace
	ShowsResident bool
	ShowsScene    bool
	// Keep is how many of the chat's latest traces are kept.
	Keep int
}

type promptTraceData struct {
	Blocks []PromptBlock      `json:"blocks"`
	Items  []PromptRecallItem `json:"items"`
	Lore   []PromptLore       `json:"lore,omitempty"`
}

// RecordPromptTrace stores a reply's prompt trace and deletes the chat's
// traces beyond w.Keep, in one transaction. A regenerated reply has its
// own. The chats whose words the trace holds are read and held (on
// PostgreSQL, FOR KEY SHARE) in the same transaction, as are its recall
// items: when one of them was forgotten since the prompt was built, nothing
// is stored, so no trace outlives a forgotten chat's words. It returns
// nil then too.
func (s *Store) RecordPromptTrace(ctx context.Context, w PromptTraceWrite) error {
	t := w.Trace
	t.Character = FitName(t.Character, NameSize)
	t.Model = FitName(t.Model, NameSize)
	t.CreatedAt = s.now()
	data, err := json.Marshal(promptTraceData{Blocks: t.Blocks, Items: t.Items, Lore: t.Lore})
	if err != nil {
		return fmt.Errorf("models: prompt trace of %s: %w", t.MessageID, err)
	}
	t.Data = string(data)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		items, whole, err := s.traceItems(tx, w, t)
		if err != nil || !whole {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&t).Error; err != nil {
			return err
		}
		if err := tx.Where("message_id = ?", t.MessageID).Delete(&PromptTraceItem{}).Error; err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(items, 200).Error; err != nil {
			return err
		}
		var old []string
		if err := tx.Model(&PromptTrace{}).Where("chat_id = ?", t.ChatID).Order("created_at DESC, message_id DESC").
			Offset(max(w.Keep, 1)).Pluck("message_id", &old).Error; err != nil {
			return err
		}
		return deleteTraces(tx, old)
	})
	if err != nil {
		return fmt.Errorf("models: prompt trace of %s: %w", t.MessageID, err)
	}
	return nil
}

// traceItems files the trace under the chats whose words it may hold:
// its own, the chats of its recall items (a perception's, every chat a
// belief's evidence or checks came from), with the resident the chats of
// its card's manifest in the space, with the scene the chats that wrote
// the character's relationships or granted what it knows. whole is false
// when a recall item or one of those chats is gone.
//
// On PostgreSQL the chats' rows are held FOR KEY SHARE first, then the
// items' (the order ForgetChat takes them in: chat, then what it
// deletes), so a forget either waits for the trace to be stored, and
// then deletes it, or is done before and the trace is not stored.
func (s *Store) traceItems(tx *gorm.DB, w PromptTraceWrite, t PromptTrace) (items []PromptTraceItem, whole bool, err error) {
	lock := func(q *gorm.DB) *gorm.DB {
		if s.dialect == "postgres" {
			return q.Clauses(clause.Locking{Strength: "KEY SHARE"})
		}
		return q
	}
	seen := map[[2]string]bool{}
	add := func(item, from string) {
		if from == "" || seen[[2]string{item, from}] {
			return
		}
		seen[[2]string{item, from}] = true
		items = append(items, PromptTraceItem{MessageID: t.MessageID, ItemID: item, FromChat: from, ChatID: t.ChatID})
	}
	add("", t.ChatID)
	var ids []string
	for _, it := range t.Items {
		if !slices.Contains(ids, it.ID) {
			ids = append(ids, it.ID)
		}
	}
	// The items' chats, read first without a lock.
	if err := itemChats(tx, ids, add); err != nil {
		return nil, false, err
	}
	var chats []string
	if w.ShowsResident {
		var fromManifest []string
		if err := tx.Model(&ManifestEntry{}).Where("card_id = ? AND space_id = ?", t.CardID, t.SpaceID).
			Pluck("chat_id", &fromManifest).Error; err != nil {
			return nil, false, err
		}
		chats = append(chats, fromManifest...)
	}
	if w.ShowsScene {
		var rels []Relationship
		if err := tx.Select("chat_id, chats").Where("space_id = ? AND from_name = ?", t.SpaceID, t.Character).Find(&rels).Error; err != nil {
			return nil, false, err
		}
		for _, r := range rels {
			chats = append(chats, r.ChatID)
			chats = append(chats, splitLines(r.Chats)...)
		}
		var known []string
		if err := tx.Model(&Knowledge{}).Where("space_id = ? AND character_name = ?", t.SpaceID, t.Character).
			Distinct("chat_id").Pluck("chat_id", &known).Error; err != nil {
			return nil, false, err
		}
		chats = append(chats, known...)
	}
	for _, c := range chats {
		add("", c)
	}
	held := map[string]bool{}
	var all []string
	for _, it := range items {
		if !held[it.FromChat] {
			held[it.FromChat] = true
			all = append(all, it.FromChat)
		}
	}
	slices.Sort(all)
	for start := 0; start < len(all); start += 500 {
		part := all[start:min(start+500, len(all))]
		var live []string
		if err := lock(tx.Model(&Chat{}).Where("id IN ?", part)).Pluck("id", &live).Error; err != nil {
			return nil, false, err
		}
		if len(live) == len(part) {
			continue
		}
		if !slices.Contains(live, t.ChatID) && slices.Contains(part, t.ChatID) {
			return nil, false, nil
		}
		// A manifest keeps a forgotten chat's entry (its merged hash)
		// until the next consolidation: a chat with a tombstone is gone,
		// and so is what the resident this prompt read took from it.
		var gone int64
		if err := tx.Model(&Tombstone{}).Where("chat_id IN ?", part).Count(&gone).Error; err != nil {
			return nil, false, err
		}
		if gone > 0 {
			return nil, false, nil
		}
	}
	// Then the items themselves, held: each must still be there, and
	// come from no chat but those held.
	found := map[string]bool{}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		var ps []string
		if err := lock(tx.Model(&Perception{}).Where("id IN ?", part)).Pluck("id", &ps).Error; err != nil {
			return nil, false, err
		}
		var bs []string
		if err := lock(tx.Model(&Belief{}).Where("id IN ?", part)).Pluck("id", &bs).Error; err != nil {
			return nil, false, err
		}
		for _, id := range append(ps, bs...) {
			found[id] = true
		}
	}
	for _, id := range ids {
		if !found[id] {
			return nil, false, nil
		}
	}
	late := false
	if err := itemChats(tx, ids, func(_, from string) { late = late || !held[from] }); err != nil {
		return nil, false, err
	}
	if late {
		// A belief gained evidence from another chat meanwhile: the next
		// reply's trace files it.
		return nil, false, nil
	}
	return items, true, nil
}

// itemChats calls add with each recall item and a chat its words came
// from: a perception's chat; every chat a belief's evidence or checks
// came from.
func itemChats(tx *gorm.DB, ids []string, add func(item, from string)) error {
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		var ps []Perception
		if err := tx.Select("id, chat_id").Where("id IN ?", part).Find(&ps).Error; err != nil {
			return err
		}
		for _, p := range ps {
			add(p.ID, p.ChatID)
		}
		var from []struct{ BeliefID, ChatID string }
		if err := tx.Raw(`SELECT belief_id, chat_id FROM belief_evidence WHERE belief_id IN ?
UNION SELECT belief_id, chat_id FROM belief_checks WHERE belief_id IN ?`, part, part).Scan(&from).Error; err != nil {
			return err
		}
		for _, f := range from {
			if f.ChatID != "" {
				add(f.BeliefID, f.ChatID)
			}
		}
	}
	return nil
}

// splitLines splits a list kept one a line, skipping blank lines.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if line := s[start:i]; line != "" {
				out = append(out, line)
			}
			start = i + 1
		}
	}
	return out
}

// deleteTraces deletes the traces of the given replies and their filing.
func deleteTraces(tx *gorm.DB, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		if err := tx.Where("message_id IN ?", part).Delete(&PromptTraceItem{}).Error; err != nil {
			return err
		}
		if err := tx.Where("message_id IN ?", part).Delete(&PromptTrace{}).Error; err != nil {
			return err
		}
	}
	return nil
}

// forgetTraces deletes, inside a forget's transaction, every prompt trace
// in any chat that shows one of the items, or holds words of the chat
// fromChat ("" for none): its own chat's and every other chat's traces
// filed under it.
func forgetTraces(tx *gorm.DB, items any, fromChat string) error {
	q := tx.Model(&PromptTraceItem{}).Distinct("message_id")
	switch {
	case items != nil && fromChat != "":
		q = q.Where("item_id IN (?) OR from_chat = ? OR chat_id = ?", items, fromChat, fromChat)
	case items != nil:
		q = q.Where("item_id IN (?)", items)
	default:
		q = q.Where("from_chat = ? OR chat_id = ?", fromChat, fromChat)
	}
	var ids []string
	if err := q.Pluck("message_id", &ids).Error; err != nil {
		return err
	}
	if fromChat != "" {
		// Filed or not, a chat's own traces go with it.
		var own []string
		if err := tx.Model(&PromptTrace{}).Where("chat_id = ?", fromChat).Pluck("message_id", &own).Error; err != nil {
			return err
		}
		ids = append(ids, own...)
	}
	return deleteTraces(tx, ids)
}

// PromptTrace returns the prompt trace of the reply messageID, with its
// blocks, recall items and the chats it holds words of; ErrNotFound when
// none is kept (web.prompts off, the reply too old, or forgotten).
func (s *Store) PromptTrace(ctx context.Context, messageID string) (PromptTrace, error) {
	var t PromptTrace
	if err := s.db.WithContext(ctx).Where("message_id = ?", messageID).Take(&t).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return t, ErrNotFound
		}
		return t, fmt.Errorf("models: prompt trace of %s: %w", messageID, err)
	}
	var d promptTraceData
	if err := json.Unmarshal([]byte(t.Data), &d); err != nil {
		return t, fmt.Errorf("models: prompt trace of %s: %w", messageID, err)
	}
	t.Blocks, t.Items, t.Lore = d.Blocks, d.Items, d.Lore
	var from []string
	if err := s.db.WithContext(ctx).Model(&PromptTraceItem{}).Where("message_id = ?", messageID).Distinct("from_chat").
		Pluck("from_chat", &from).Error; err != nil {
		return t, fmt.Errorf("models: prompt trace of %s: %w", messageID, err)
	}
	slices.Sort(from)
	t.Sources = append([]string{t.ChatID}, slices.DeleteFunc(from, func(c string) bool { return c == t.ChatID })...)
	return t, nil
}

// ChatPromptTraces lists a chat's kept prompt traces, newest first, at
// most limit (at least 1): a light listing, without blocks, items or
// sources (PromptTrace reads one whole).
func (s *Store) ChatPromptTraces(ctx context.Context, chatID string, limit int) ([]PromptTrace, error) {
	var out []PromptTrace
	err := s.db.WithContext(ctx).Omit("data").Where("chat_id = ?", chatID).Order("created_at DESC, message_id DESC").
		Limit(max(limit, 1)).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: prompt traces of chat %s: %w", chatID, err)
	}
	return out, nil
}

// LoreFiring is a lorebook entry that fired on a card's recent turns: how
// many of the traced replies held it, and the newest of them.
type LoreFiring struct {
	PromptLore
	Turns    int
	LastAt   time.Time
	LastChat string
	// LastReply is the reply whose prompt held it last.
	LastReply string
}

// LoreFired lists the lorebook entries the card's latest traced replies
// (at most turns of them, in every chat and space) put in their prompts,
// the most often fired first. It reads what the prompt traces kept:
// nothing when web.prompts is 0.
func (s *Store) LoreFired(ctx context.Context, cardID string, turns int) ([]LoreFiring, error) {
	var rows []PromptTrace
	err := s.db.WithContext(ctx).Select("message_id", "chat_id", "created_at", "data").Where("card_id = ?", cardID).
		Order("created_at DESC, message_id DESC").Limit(max(turns, 1)).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: lore fired for card %s: %w", cardID, err)
	}
	var out []LoreFiring
	at := map[[2]string]int{}
	for _, r := range rows {
		var d promptTraceData
		if json.Unmarshal([]byte(r.Data), &d) != nil {
			continue
		}
		seen := map[[2]string]bool{}
		for _, l := range d.Lore {
			k := [2]string{l.Book, l.UID}
			if seen[k] {
				continue
			}
			seen[k] = true
			i, ok := at[k]
			if !ok {
				// Rows come newest first: the first sight is the last firing.
				at[k] = len(out)
				out = append(out, LoreFiring{PromptLore: l, LastAt: r.CreatedAt, LastChat: r.ChatID, LastReply: r.MessageID})
				i = len(out) - 1
			}
			out[i].Turns++
		}
	}
	slices.SortStableFunc(out, func(a, b LoreFiring) int { return b.Turns - a.Turns })
	return out, nil
}

func promptTraceTables() []any { return []any{&PromptTrace{}, &PromptTraceItem{}} }
