package models

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/recall"
)

// RecallLoad names the items a turn's search found, to load for scoring.
type RecallLoad struct {
	SpaceID, Character string
	// ChatID and HeadID are the chat the turn is in and its head: of this
	// chat, only the items of the current branch count.
	ChatID, HeadID string
	Perceptions    []string `json:"perceptions"`
	Beliefs        []string `json:"beliefs"`
}

// RecallItems are the loaded items and the chat's story time now, in
// minutes since day 0; each item's Shift puts it on that clock.
type RecallItems struct {
	Items []recall.Item `json:"items"`
	Now   int64         `json:"now"`
}

// recallPerceptionsSQL loads a character's perceptions with what their
// event says (message, about, place), who told a told one, the belief it
// was folded into, and whether its message is on the turn's branch.
//
// The rows are looked up by id alone and their space and character checked
// on the rows read: given the character too, a planner may walk all of the
// character's perceptions instead.
//
// Of the turn's own chat (the first parameter) only the current branch
// counts: a message is on it when it is the head (the second) or has a
// child, since a /regen replaces only the head and so the siblings it
// leaves behind are always leaves (as are refused messages), and the
// recorder only ever records the branch. The child is looked up per row,
// by the index on parent_id, for the few rows of that chat: joined to the
// messages instead, PostgreSQL hashed every message of the database and
// scanned the whole events table (8–25 ms a turn at 10,000 perceptions).
// The EXISTS carries "LIMIT 1 OFFSET 0" for the same reason: without it,
// PostgreSQL may plan it as a hashed subplan, which reads every message of
// the database once per query (while they are few enough to look cheap:
// 26 ms at 4,000 messages under load, 2 ms with it).
const recallPerceptionsSQL = `SELECT p.id, p.space_id, p.character_name, p.chat_id, p.mode, p.text, p.gist, p.importance, p.seq, p.day, p.minute, p.recall_count,
  COALESCE(p.folded_into, ''), e.message_id, e.about, e.place, COALESCE(v.actor, ''),
  CASE WHEN p.chat_id = ? AND e.message_id <> ?
       THEN EXISTS (SELECT 1 FROM messages c WHERE c.parent_id = e.message_id AND c.refused = ? LIMIT 1 OFFSET 0)
       ELSE ? END,
  b.id, b.space_id, b.character_name, b.text, b.confidence, b.about, b.changed_seq, b.recall_count
FROM perceptions p JOIN events e ON e.id = p.event_id LEFT JOIN events v ON v.id = p.via
  LEFT JOIN beliefs b ON b.id = p.folded_into
WHERE p.id IN ? AND p.mode <> 'none'`

// RecallItems loads the found items of the character (never another's),
// the beliefs its perceptions were folded into (in their place), the
// chat's latest story time, and the story clocks of the other chats the
// perceptions come from (recallClocksSQL, shiftClocks), in four reads side
// by side: one round trip. Of the turn's own chat only the current branch
// counts (see recallPerceptionsSQL).
func (s *Store) RecallItems(ctx context.Context, q RecallLoad) (RecallItems, error) {
	var out RecallItems
	db := s.db.WithContext(ctx)
	char := FitName(q.Character, NameSize)
	var g errgroup.Group
	var clocks []chatClock
	g.Go(func() error {
		return db.Raw(s.oneOf(recallClocksSQL), q.ChatID, q.ChatID, true, true, q.ChatID, true, true, q.ChatID, true, s.ids(q.Perceptions), q.ChatID).Scan(&clocks).Error
	})
	var asked []Belief
	if len(q.Beliefs) > 0 {
		g.Go(func() error { return db.Where("id IN ?", q.Beliefs).Find(&asked).Error })
	}
	found, chats, folded, err := s.recallPerceptions(db, q, char)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return RecallItems{}, fmt.Errorf("models: recall items of %s: %w", q.Character, err)
	}
	for _, c := range clocks {
		if c.ChatID == q.ChatID && c.Own.Valid {
			out.Now = c.Own.Int64
		}
	}
	out.Items = shiftClocks(found, chats, clocks, q.ChatID, out.Now)
	beliefs := make(map[string]Belief, len(asked)+len(folded))
	for _, b := range append(asked, folded...) {
		beliefs[b.ID] = b
	}
	// A belief comes once, whether it was found itself or through the
	// perceptions folded into it.
	for _, b := range beliefs {
		if b.SpaceID != q.SpaceID || b.Character != char {
			continue
		}
		// A belief is held now: it does not fade with the time since its
		// evidence.
		out.Items = append(out.Items, recall.Item{ID: b.ID, Kind: recall.Belief, Text: b.Text, Importance: beliefImportance,
			StoryMinute: out.Now, Seq: b.ChangedSeq, Recalls: b.RecallCount, Confidence: confidenceWord(b.Confidence), About: lines(b.About)})
	}
	return out, nil
}

// recallPerceptions reads the found perceptions of the character (never
// another's) that are not on another branch of the turn's chat, and the
// beliefs they were folded into; chats are the found ones' chats, in
// order.
func (s *Store) recallPerceptions(db *gorm.DB, q RecallLoad, char string) (found []recall.Item, chats []string, folded []Belief, err error) {
	if len(q.Perceptions) == 0 {
		return nil, nil, nil, nil
	}
	rows, err := db.Raw(s.oneOf(recallPerceptionsSQL), q.ChatID, q.HeadID, false, true, s.ids(q.Perceptions)).Rows()
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var it recall.Item
		var day, minute int
		var about, space, owner, chat string
		var onBranch bool
		var b struct {
			id, space, owner, text, about sql.NullString
			confidence, recalls           sql.NullInt64
			changed                       sql.NullInt64
		}
		if err := rows.Scan(&it.ID, &space, &owner, &chat, &it.Mode, &it.Text, &it.Gist, &it.Importance, &it.Seq, &day, &minute, &it.Recalls,
			&it.FoldedInto, &it.MessageID, &about, &it.Place, &it.Via, &onBranch,
			&b.id, &b.space, &b.owner, &b.text, &b.confidence, &b.about, &b.changed, &b.recalls); err != nil {
			return nil, nil, nil, err
		}
		if space != q.SpaceID || owner != char || !onBranch {
			continue // never another character's memory, nor another branch's
		}
		if b.id.Valid {
			folded = append(folded, Belief{ID: b.id.String, SpaceID: b.space.String, Character: b.owner.String, Text: b.text.String,
				Confidence: int(b.confidence.Int64), About: b.about.String, ChangedSeq: b.changed.Int64, RecallCount: int(b.recalls.Int64)})
		}
		it.Kind, it.About, it.StoryMinute = recall.Perception, lines(about), storyMinute(day, minute)
		found, chats = append(found, it), append(chats, chat)
	}
	return found, chats, folded, rows.Err()
}

// recallClocksSQL reads the turn's chat's story time now (its latest
// sealed event; its first row) and, for each other chat that a found
// perception comes from, that chat's story time when it last moved and
// the turn's chat's story time at that moment in the space's one order of
// turns: its latest sealed event up to then, or its first when it began
// later. One statement for all the chats, each an index probe of
// idx_event_chat_sealed; run beside the perceptions' read, so no round trip
// of its own. The time now had a statement of its own, which PostgreSQL
// planned anew at every turn (2,422 plans for 2,450 calls, four times its
// running time).
const recallClocksSQL = `SELECT CAST(? AS TEXT) AS chat_id,
  (SELECT e.day * 1440 + e.minute FROM events e WHERE e.chat_id = ? AND e.sealed = ? ORDER BY e.seq DESC LIMIT 1) AS own, NULL AS here
UNION ALL
SELECT c.chat_id,
  (SELECT e.day * 1440 + e.minute FROM events e WHERE e.chat_id = c.chat_id AND e.sealed = ? ORDER BY e.seq DESC LIMIT 1) AS own,
  COALESCE(
    (SELECT k.day * 1440 + k.minute FROM events k WHERE k.chat_id = ? AND k.sealed = ?
       AND k.seq <= (SELECT e.seq FROM events e WHERE e.chat_id = c.chat_id AND e.sealed = ? ORDER BY e.seq DESC LIMIT 1)
       ORDER BY k.seq DESC LIMIT 1),
    (SELECT f.day * 1440 + f.minute FROM events f WHERE f.chat_id = ? AND f.sealed = ? ORDER BY f.seq LIMIT 1)) AS here
FROM (SELECT DISTINCT chat_id FROM perceptions WHERE id IN ? AND chat_id <> ?) c`

// chatClock is a row of recallClocksSQL: another chat's story time when it
// last moved, and the turn's chat's then (NULL while that chat has none).
type chatClock struct {
	ChatID string        `json:"chat_id"`
	Own    sql.NullInt64 `json:"own"`
	Here   sql.NullInt64 `json:"here"`
}

// shiftClocks puts the perceptions of other chats on the turn's chat's
// story clock (recall.Item.Shift): each chat keeps its own, so a memory
// ages by the story time that passed after it in its own chat, then by
// what passed in the turn's chat since that chat last moved. What faded in
// one chat is not fresh in the next, which may start again at day 1; what
// nothing followed in its own chat is as fresh as the turn's chat's time
// since allows. A turn's chat with no story time yet counts from now.
func shiftClocks(items []recall.Item, chats []string, clocks []chatClock, chatID string, now int64) []recall.Item {
	shift := make(map[string]int64, len(clocks))
	for _, c := range clocks {
		if !c.Own.Valid || c.ChatID == chatID {
			continue
		}
		here := now
		if c.Here.Valid {
			here = c.Here.Int64
		}
		shift[c.ChatID] = here - c.Own.Int64
	}
	for i := range items {
		items[i].Shift = shift[chats[i]]
	}
	return items
}

// beliefImportance is a belief's importance in a recall score: what a
// character came to hold over several turns matters more than one event.
const beliefImportance = 7

func confidenceWord(c int) string {
	switch c {
	case 1:
		return "doubtful"
	case 3:
		return "sure"
	}
	return "likely"
}

func storyMinute(day, minute int) int64 {
	return int64(day)*recall.MinutesPerDay + int64(minute)
}

// RecallDiagnostic keeps one turn's recall for the inspector (/why, troupe
// memory why): the candidates with their scores, which were picked and
// why, as JSON. Only the last recall.diagnostics_turns of a chat are kept;
// /forget deletes them with the chat, and deletes in every chat those that
// name an item of the forgotten chat (RecallDiagnosticItem).
type RecallDiagnostic struct {
	ID        string    `gorm:"primaryKey;size:26" json:"id"`
	ChatID    string    `gorm:"size:26;not null;index" json:"chat_id"`
	MessageID string    `gorm:"size:26;not null;default:''" json:"message_id"`
	Character string    `gorm:"column:character_name;size:200;not null" json:"character"`
	Data      string    `gorm:"type:text;not null" json:"data"`
	CreatedAt time.Time `json:"created_at"`
	// Perceptions and Beliefs are the candidates Data names, by id: what
	// NoteRecall files as the record's items.
	Perceptions []string `gorm:"-" json:"perceptions"`
	Beliefs     []string `gorm:"-" json:"beliefs"`
}

// RecallDiagnosticItem is one item a diagnostic names, with a chat its
// words come from: a perception's own chat; for a belief one row with
// FromChat "" and one for each chat its evidence or checks came from when
// the diagnostic was written (the belief may be gone, reflected away, by
// the time one of them is forgotten). Filed from the stored items, never
// from the diagnostic's text. ChatID is the diagnostic's chat.
type RecallDiagnosticItem struct {
	DiagnosticID string `gorm:"primaryKey;size:26" json:"diagnostic_id"`
	ItemID       string `gorm:"primaryKey;size:26;index" json:"item_id"`
	FromChat     string `gorm:"primaryKey;size:26;index" json:"from_chat"`
	ChatID       string `gorm:"size:26;not null;index" json:"chat_id"`
}

// RecallDone is what a turn's recall leaves behind: the items it recalled
// (each counts as recalled once more) and, with diagnostics on, its
// inspector record.
type RecallDone struct {
	Perceptions, Beliefs []string
	Diagnostic           *RecallDiagnostic `json:"diagnostic"`
	// Keep is how many diagnostics of the chat are kept.
	Keep int `json:"keep"`
}

// NoteRecall records a turn's recall: the recall counts are gathered and
// written with other turns' a second later (recall_counts.go); the
// diagnostic, when given, is written now in one transaction with the
// chat's oldest beyond Keep deleted.
func (s *Store) NoteRecall(ctx context.Context, d RecallDone) error {
	s.countRecalls(d.Perceptions, d.Beliefs)
	if d.Diagnostic == nil {
		return nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		diag := *d.Diagnostic
		diag.ID, diag.CreatedAt = NewID(), s.now()
		diag.Character = FitName(diag.Character, NameSize)
		items, whole, err := diagnosticItems(tx, diag)
		if err != nil || !whole {
			// An item it names was forgotten meanwhile: its words must not
			// outlive it here.
			return err
		}
		if err := tx.Create(&diag).Error; err != nil {
			return err
		}
		if len(items) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(items, 200).Error; err != nil {
				return err
			}
		}
		var cutoff sql.NullString
		if err := tx.Model(&RecallDiagnostic{}).Select("id").Where("chat_id = ?", diag.ChatID).Order("id DESC").
			Offset(max(d.Keep, 1)).Limit(1).Scan(&cutoff).Error; err != nil {
			return err
		}
		if !cutoff.Valid {
			return nil
		}
		if err := tx.Where("diagnostic_id IN (?)", tx.Model(&RecallDiagnostic{}).Select("id").
			Where("chat_id = ? AND id <= ?", diag.ChatID, cutoff.String)).Delete(&RecallDiagnosticItem{}).Error; err != nil {
			return err
		}
		return tx.Where("chat_id = ? AND id <= ?", diag.ChatID, cutoff.String).Delete(&RecallDiagnostic{}).Error
	})
	if err != nil {
		return fmt.Errorf("models: note recall: %w", err)
	}
	return nil
}

// diagnosticItems files the items diag names, and the chats their words
// come from, from the stored rows; whole is false when one of them is gone
// (forgotten since the turn read it). On PostgreSQL the rows are held FOR
// KEY SHARE until the transaction ends, so a forget either waits for the
// diagnostic to be stored, and then deletes it, or is done before it is
// read, and it is not stored: never a diagnostic left naming a forgotten
// chat's words.
func diagnosticItems(tx *gorm.DB, diag RecallDiagnostic) (items []RecallDiagnosticItem, whole bool, err error) {
	lock := func(q *gorm.DB) *gorm.DB {
		if tx.Dialector.Name() == "postgres" {
			return q.Clauses(clause.Locking{Strength: "KEY SHARE"})
		}
		return q
	}
	add := func(item, from string) {
		items = append(items, RecallDiagnosticItem{DiagnosticID: diag.ID, ItemID: item, FromChat: from, ChatID: diag.ChatID})
	}
	found := map[string]bool{}
	for start := 0; start < len(diag.Perceptions); start += 500 {
		var ps []Perception
		if err := lock(tx.Select("id, chat_id").Where("id IN ?", diag.Perceptions[start:min(start+500, len(diag.Perceptions))])).
			Find(&ps).Error; err != nil {
			return nil, false, err
		}
		for _, p := range ps {
			found[p.ID] = true
			add(p.ID, p.ChatID)
		}
	}
	for start := 0; start < len(diag.Beliefs); start += 500 {
		part := diag.Beliefs[start:min(start+500, len(diag.Beliefs))]
		var ids []string
		if err := lock(tx.Model(&Belief{}).Where("id IN ?", part)).Pluck("id", &ids).Error; err != nil {
			return nil, false, err
		}
		for _, id := range ids {
			found[id] = true
			add(id, "")
		}
		var from []struct{ BeliefID, ChatID string }
		if err := tx.Raw(`SELECT belief_id, chat_id FROM belief_evidence WHERE belief_id IN ?
UNION SELECT belief_id, chat_id FROM belief_checks WHERE belief_id IN ?`, part, part).Scan(&from).Error; err != nil {
			return nil, false, err
		}
		for _, f := range from {
			if f.ChatID != "" {
				add(f.BeliefID, f.ChatID)
			}
		}
	}
	for _, id := range append(append([]string(nil), diag.Perceptions...), diag.Beliefs...) {
		if !found[id] {
			return nil, false, nil
		}
	}
	return items, true, nil
}

// forgetDiagnostics deletes, inside a forget's transaction, every recall
// diagnostic in any chat that names one of the items, or an item whose
// words came from the chat fromChat ("" for none), and every prompt trace
// that shows one of them or holds words of fromChat (forgetTraces).
func forgetDiagnostics(tx *gorm.DB, items any, fromChat string) error {
	q := tx.Model(&RecallDiagnosticItem{}).Distinct("diagnostic_id")
	switch {
	case items != nil && fromChat != "":
		q = q.Where("item_id IN (?) OR from_chat = ?", items, fromChat)
	case items != nil:
		q = q.Where("item_id IN (?)", items)
	default:
		q = q.Where("from_chat = ?", fromChat)
	}
	var ids []string
	if err := q.Pluck("diagnostic_id", &ids).Error; err != nil {
		return err
	}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		if err := tx.Where("diagnostic_id IN ?", part).Delete(&RecallDiagnosticItem{}).Error; err != nil {
			return err
		}
		if err := tx.Where("id IN ?", part).Delete(&RecallDiagnostic{}).Error; err != nil {
			return err
		}
	}
	// Prompt traces show the same items, and are filed the same way.
	return forgetTraces(tx, items, fromChat)
}

// RecallDiagnostics lists a chat's kept recall records, newest first; with
// messageID, only that turn's.
func (s *Store) RecallDiagnostics(ctx context.Context, chatID, messageID string, limit int) ([]RecallDiagnostic, error) {
	q := s.db.WithContext(ctx).Where("chat_id = ?", chatID)
	if messageID != "" {
		q = q.Where("message_id = ?", messageID)
	}
	var out []RecallDiagnostic
	if err := q.Order("id DESC").Limit(max(limit, 1)).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: recall diagnostics of chat %s: %w", chatID, err)
	}
	return out, nil
}
