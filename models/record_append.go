package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// TurnRecord is what storing a turn records at once, without a model: who
// was present at each message and, with the recorder on, the messages'
// plain events.
type TurnRecord struct {
	SpaceID string `json:"space_id"`
	// Present are the characters present at the messages besides the
	// players carried over from the parent message: the cast members not
	// away and the players who speak in these messages. Players carry
	// over along the branch, so a player who spoke once in the scene stays
	// present; cast members never do (an away one is simply not listed).
	Present []string `json:"present"`
	// Cast names every cast member, away and removed ones included: their
	// presence at the parent is not carried over.
	Cast []string `json:"cast"`
	// Whisper, when set, names the only characters who perceive the
	// messages (the writer and the one whispered to); the players carried
	// over are stored as present but not perceiving, so the scene keeps
	// them after the whisper.
	Whisper []string `json:"whisper"`
	// Actors names each message's speaker, aligned with the messages; nil
	// with Events when only presence is recorded (the recorder is off).
	Actors []string `json:"actors"`
	// Events holds each message's plain events, aligned with the messages.
	Events [][]PlainEvent `json:"events"`
	// NewTurn: the messages open a turn (a user's messages) and take the
	// space's next turn number; a reply belongs to its user's turn.
	NewTurn bool `json:"new_turn"`
}

// PlainEvent is one plain event of a message: its kind (action or line) and
// its verbatim text.
type PlainEvent struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// errTurnRecord: the record does not match its messages.
var errTurnRecord = errors.New("turn record does not match its messages")

func (r *TurnRecord) check(n int) error {
	if r == nil {
		return nil
	}
	if r.SpaceID == "" || (!r.presenceOnly() && (len(r.Actors) != n || len(r.Events) != n)) {
		return errTurnRecord
	}
	return nil
}

// presenceOnly: the record holds no events (the recorder is off), so the
// turn takes no number either.
func (r *TurnRecord) presenceOnly() bool { return r.Actors == nil && r.Events == nil }

// events lists the event rows of the messages (without their turn number).
func (r *TurnRecord) events(chatID string, msgs []*Message, now time.Time) []Event {
	var out []Event
	for i, m := range msgs {
		for j, pe := range r.Events[i] {
			out = append(out, Event{ID: NewID(), ChatID: chatID, SpaceID: r.SpaceID, MessageID: m.ID, Ord: j,
				Kind: pe.Kind, Actor: FitName(r.Actors[i], NameSize), Text: pe.Text, CreatedAt: now})
		}
	}
	return out
}

func (r *TurnRecord) present() []string { return fitNames(r.Present) }

// fitNames fits names to their column and drops empty and repeated ones.
func fitNames(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range names {
		// Names come from platforms: PostgreSQL refuses NUL bytes and
		// invalid UTF-8 in text.
		p = FitName(strings.ToValidUTF8(strings.ReplaceAll(p, "\x00", ""), "\uFFFD"), NameSize)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// turnSeqSQL takes the space's next turn number for messages that open a
// turn.
const turnSeqSQL = `INSERT INTO space_turns (space_id, seq) %s ON CONFLICT (space_id) DO UPDATE SET seq = space_turns.seq + 1 RETURNING seq`

// replySeqSQL is the turn number of messages that open no turn (a reply):
// their parent's, the turn they answer; when it has no events, the
// space's latest (0 before its first). Taking the space's latest always,
// as the replies did, gave a reply in a busy space the number of whatever
// turn another chat had begun meanwhile (1,996 of 2,000 in troupe bench's
// 100 channels): a chat then counted two turns per exchange, its
// reflection came due twice as often, and a belief "from two turns" could
// rest on one exchange. Read, not written: the space's row is not locked.
const replySeqSQL = `SELECT COALESCE((SELECT e.seq FROM events e WHERE e.message_id = CAST(? AS TEXT) LIMIT 1),
  (SELECT t.seq FROM space_turns t WHERE t.space_id = CAST(? AS TEXT)), 0) AS seq`

// presenceSelect selects (message id, character, perceived) for every
// message and every character present: the players at the parent (cast
// members are never carried over) plus rec's. Under a whisper only its
// names perceive.
func presenceSelect(q *strings.Builder, args []any, chatID, parentID string, msgs []*Message, names []string, rec *TurnRecord, from string) []any {
	perceived := "TRUE"
	args = append(args, chatID, rec.SpaceID)
	if w := fitNames(rec.Whisper); len(w) > 0 {
		perceived = "p.name IN (" + placeholders(len(w)) + ")"
		for _, n := range w {
			args = append(args, n)
		}
	}
	q.WriteString(`INSERT INTO message_presences (message_id, character_name, chat_id, space_id, perceived)
SELECT m.id, p.name, CAST(? AS TEXT), CAST(? AS TEXT), ` + perceived + ` FROM ` + from + `(`)
	for i, msg := range msgs {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT CAST(? AS TEXT) AS id")
		args = append(args, msg.ID)
	}
	q.WriteString(") m, (SELECT character_name AS name FROM message_presences WHERE message_id = ?")
	args = append(args, parentID)
	if cast := fitNames(rec.Cast); len(cast) > 0 {
		q.WriteString(" AND character_name NOT IN (" + placeholders(len(cast)) + ")")
		for _, n := range cast {
			args = append(args, n)
		}
	}
	for _, n := range names {
		q.WriteString(" UNION SELECT CAST(? AS TEXT)")
		args = append(args, n)
	}
	q.WriteString(") p")
	return args
}

// recordTurnTx writes the record of a turn inside Append's transaction on
// SQLite: three statements, whatever the number of events (one when only
// presence is recorded).
func recordTurnTx(tx *gorm.DB, chatID, parentID string, msgs []*Message, rec *TurnRecord, now time.Time) error {
	if rec == nil {
		return nil
	}
	if rec.presenceOnly() {
		var q strings.Builder
		args := presenceSelect(&q, nil, chatID, parentID, msgs, rec.present(), rec, "")
		return tx.Exec(q.String(), args...).Error
	}
	var seq int64
	turn := tx.Raw(replySeqSQL, parentID, rec.SpaceID)
	if rec.NewTurn {
		turn = tx.Raw(strings.Replace(turnSeqSQL, "%s", "VALUES (?, 1)", 1), rec.SpaceID)
	}
	if err := turn.Row().Scan(&seq); err != nil {
		return err
	}
	var q strings.Builder
	args := presenceSelect(&q, nil, chatID, parentID, msgs, rec.present(), rec, "")
	if err := tx.Exec(q.String(), args...).Error; err != nil {
		return err
	}
	evs := rec.events(chatID, msgs, now)
	if len(evs) == 0 {
		return nil
	}
	for i := range evs {
		evs[i].Seq = seq
	}
	return tx.CreateInBatches(evs, 200).Error
}

// recordTurnCTE adds the record of a turn to appendOne's statement on
// PostgreSQL, as data-modifying CTEs that run only where the head moved.
func recordTurnCTE(q *strings.Builder, args []any, chatID, parentID string, msgs []*Message, rec *TurnRecord, now time.Time) []any {
	if rec == nil {
		return args
	}
	if rec.presenceOnly() {
		q.WriteString(",\npresent AS (")
		args = presenceSelect(q, args, chatID, parentID, msgs, rec.present(), rec, "moved, ")
		q.WriteString(")")
		return args
	}
	if rec.NewTurn {
		q.WriteString(",\nturn AS (" + strings.Replace(turnSeqSQL, "%s", "SELECT CAST(? AS TEXT), CAST(1 AS BIGINT) FROM moved", 1) + ")")
		args = append(args, rec.SpaceID)
	} else {
		q.WriteString(",\nturn AS (" + replySeqSQL + " FROM moved)")
		args = append(args, parentID, rec.SpaceID)
	}
	q.WriteString(",\npresent AS (")
	args = presenceSelect(q, args, chatID, parentID, msgs, rec.present(), rec, "moved, ")
	q.WriteString(")")
	evs := rec.events(chatID, msgs, now)
	if len(evs) == 0 {
		return args
	}
	q.WriteString(`,
evs AS (INSERT INTO events (id, chat_id, space_id, message_id, ord, kind, actor, text, created_at, seq)
SELECT v.*, turn.seq FROM turn, (VALUES `)
	for i, e := range evs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?::text, ?::text, ?::text, ?::text, ?::bigint, ?::text, ?::text, ?::text, ?::timestamptz)")
		args = append(args, e.ID, e.ChatID, e.SpaceID, e.MessageID, e.Ord, e.Kind, e.Actor, e.Text, e.CreatedAt)
	}
	q.WriteString(") AS v)")
	return args
}

// AppendTurn is Append that also records, in the same transaction and a
// constant number of statements, who was present at the messages and, when
// rec has events, their plain events (rec; nil records nothing).
func (s *Store) AppendTurn(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message, rec *TurnRecord) error {
	return s.appendWith(ctx, chatID, expectHead, parentID, msgs, nil, rec)
}

// ConsumeTurn is Consume that also records the messages' plain events and
// presence in the same write (rec; nil records nothing).
func (s *Store) ConsumeTurn(ctx context.Context, chatID, expectHead string, msgs []*Message, inboxIDs []string, rec *TurnRecord) error {
	return s.appendWith(ctx, chatID, expectHead, expectHead, msgs, inboxIDs, rec)
}
