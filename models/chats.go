package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/text"
)

// UpsertCard stores a card, replacing an older version with the same id.
func (s *Store) UpsertCard(ctx context.Context, c Card) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"name", "language", "data", "updated_at"}),
	}).Create(&c).Error
	if err != nil {
		return fmt.Errorf("models: upsert card %s: %w", c.ID, err)
	}
	return nil
}

// Card returns the card with id, or ErrNotFound.
func (s *Store) Card(ctx context.Context, id string) (Card, error) {
	var c Card
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	return c, notFound(err)
}

// EnsureSpace creates the space if it does not exist yet. Spaces are never
// deleted, so each process remembers the ones it has seen.
func (s *Store) EnsureSpace(ctx context.Context, sp Space) error {
	if _, ok := s.spaces.Load(sp.ID); ok {
		return nil
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&sp).Error
	if err != nil {
		return fmt.Errorf("models: ensure space %s: %w", sp.ID, err)
	}
	s.spaces.Store(sp.ID, struct{}{})
	return nil
}

// CreateChannel creates the channel ch unless one with its id exists, and
// returns the stored row: ch itself when it was created (one statement), the
// existing row otherwise.
func (s *Store) CreateChannel(ctx context.Context, ch Channel) (Channel, error) {
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&ch)
	if res.Error != nil {
		return Channel{}, fmt.Errorf("models: create channel %s: %w", ch.ID, res.Error)
	}
	if res.RowsAffected == 1 {
		return ch, nil
	}
	return s.Channel(ctx, ch.ID)
}

// EnsureChannel returns the channel with ch.ID, creating it from ch first if
// it does not exist.
func (s *Store) EnsureChannel(ctx context.Context, ch Channel) (Channel, error) {
	if got, err := s.Channel(ctx, ch.ID); err == nil || !errors.Is(err, ErrNotFound) {
		return got, err
	}
	return s.CreateChannel(ctx, ch)
}

// TurnState is what a turn reads before it writes: the channel, its current
// chat, the speaking user's persona and the resident summary of the chat's
// card in its space.
type TurnState struct {
	Channel Channel `json:"channel"`
	Chat    Chat    `json:"chat"`
	// HasChat is false when the channel has no current chat (or it is gone).
	HasChat    bool    `json:"has_chat"`
	Persona    Persona `json:"persona"`
	HasPersona bool    `json:"has_persona"`
	// Resident is the stored resident summary, tags and all; "" if none.
	Resident string `json:"resident"`
	// Inbox holds the messages accepted for the channel and not yet stored
	// in its chat, oldest first.
	Inbox []InboxMessage `json:"inbox"`
	// Ledger is the chat's ledger snapshot; "" if none.
	Ledger string `json:"ledger"`
	// Cast is the chat's cast rows in position order, removed members
	// included; empty for a chat of an older database (its card alone).
	Cast []CastMember `json:"cast"`
	// LastSpeaker is the card of the cast member who wrote the branch's
	// last reply (the head, else its parent); "" when neither is a reply.
	LastSpeaker string `json:"last_speaker"`
}

// turnStateSQL reads a TurnState in one round trip.
const turnStateSQL = `SELECT ch.id, ch.platform, ch.external_id, ch.space_id, ch.card_id, ch.current_chat_id,
       ch.mention_only, ch.created_at, ch.updated_at,
       c.id, c.channel_id, c.card_id, c.space_id, c.name, c.head_id, c.created_at, c.active_at,
       p.user_key, p.name, p.description, r.content, l.snapshot,
       ib.id, ib.platform, ib.ref, ib.author_id, ib.author_name, ib.content, ib.dedup_key, ib.addressed, ib.created_at,
       hm.role, hm.speaker_card_id, hp.role, hp.speaker_card_id,
       cc.card_id, cc.name, cc.position, cc.away, cc.joined_at, cc.left_at
FROM channels ch
LEFT JOIN chats c ON c.id = ch.current_chat_id
LEFT JOIN personas p ON p.user_key = ?
LEFT JOIN resident_summaries r ON r.card_id = c.card_id AND r.space_id = c.space_id
LEFT JOIN ledgers l ON l.chat_id = c.id
LEFT JOIN inbox_messages ib ON ib.channel_id = ch.id
LEFT JOIN messages hm ON hm.id = c.head_id
LEFT JOIN messages hp ON hp.id = hm.parent_id
LEFT JOIN chat_casts cc ON cc.chat_id = c.id
WHERE ch.id = ?
ORDER BY ib.id, cc.position`

// TurnState reads the state of the channel with channelID for a turn of the
// user with userKey, its waiting messages and its chat's cast included (one
// row per message and member).
// It returns ErrNotFound when there is no such channel.
func (s *Store) TurnState(ctx context.Context, channelID, userKey string) (TurnState, error) {
	var ts TurnState
	rows, err := s.db.WithContext(ctx).Raw(turnStateSQL, userKey, channelID).Rows()
	if err != nil {
		return ts, fmt.Errorf("models: channel %s: %w", channelID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return ts, fmt.Errorf("models: channel %s: %w", channelID, err)
		}
		return ts, ErrNotFound
	}
	var (
		cID, cChannel, cCard, cSpace, cName, cHead sql.NullString
		cCreated, cActive                          sql.NullTime
		pKey, pName, pDesc, resident, ledger       sql.NullString
		ib                                         inboxColumns
		head                                       [4]sql.NullString
		cc                                         castColumns
	)
	ch := &ts.Channel
	seenInbox, seenCast := map[string]bool{}, map[string]bool{}
	for {
		err = rows.Scan(&ch.ID, &ch.Platform, &ch.ExternalID, &ch.SpaceID, &ch.CardID, &ch.CurrentChatID,
			&ch.MentionOnly, &ch.CreatedAt, &ch.UpdatedAt,
			&cID, &cChannel, &cCard, &cSpace, &cName, &cHead, &cCreated, &cActive,
			&pKey, &pName, &pDesc, &resident, &ledger,
			&ib.id, &ib.platform, &ib.ref, &ib.authorID, &ib.authorName, &ib.content, &ib.dedupKey, &ib.addressed, &ib.created,
			&head[0], &head[1], &head[2], &head[3],
			&cc.cardID, &cc.name, &cc.position, &cc.away, &cc.joined, &cc.left)
		if err != nil {
			return ts, fmt.Errorf("models: channel %s: %w", channelID, err)
		}
		if ib.id.Valid && !seenInbox[ib.id.String] {
			seenInbox[ib.id.String] = true
			ts.Inbox = append(ts.Inbox, ib.message(channelID))
		}
		if cc.cardID.Valid && !seenCast[cc.cardID.String] {
			seenCast[cc.cardID.String] = true
			ts.Cast = append(ts.Cast, cc.member(cID.String))
		}
		if !rows.Next() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return ts, fmt.Errorf("models: channel %s: %w", channelID, err)
	}
	if cID.Valid {
		ts.HasChat = true
		ts.Chat = Chat{ID: cID.String, ChannelID: cChannel.String, CardID: cCard.String, SpaceID: cSpace.String,
			Name: cName.String, HeadID: cHead.String, CreatedAt: cCreated.Time.UTC(), ActiveAt: cActive.Time.UTC()}
	}
	if pKey.Valid {
		ts.HasPersona = true
		ts.Persona = Persona{UserKey: pKey.String, Name: pName.String, Description: pDesc.String}
	}
	ts.Resident = resident.String
	ts.Ledger = ledger.String
	ts.LastSpeaker = lastSpeaker(head, ts.Chat.CardID)
	sort.SliceStable(ts.Cast, func(i, j int) bool { return ts.Cast[i].Position < ts.Cast[j].Position })
	return ts, nil
}

// lastSpeaker is the card of the last reply among the head (role, speaker)
// and its parent.
func lastSpeaker(head [4]sql.NullString, lead string) string {
	for i := 0; i < 4; i += 2 {
		if head[i].String == "assistant" {
			if head[i+1].String != "" {
				return head[i+1].String
			}
			return lead
		}
	}
	return ""
}

// castColumns scans a cast row of an outer join.
type castColumns struct {
	cardID, name sql.NullString
	position     sql.NullInt64
	away         sql.NullBool
	joined, left sql.NullTime
}

func (c castColumns) member(chatID string) CastMember {
	m := CastMember{ChatID: chatID, CardID: c.cardID.String, Name: c.name.String, Position: int(c.position.Int64),
		Away: c.away.Bool, JoinedAt: c.joined.Time.UTC()}
	if c.left.Valid {
		t := c.left.Time.UTC()
		m.LeftAt = &t
	}
	return m
}

// inboxColumns scans an inbox row of an outer join.
type inboxColumns struct {
	id, platform, ref, authorID, authorName, content, dedupKey, addressed sql.NullString
	created                                                               sql.NullTime
}

func (c inboxColumns) message(channelID string) InboxMessage {
	m := InboxMessage{ID: c.id.String, ChannelID: channelID, Platform: c.platform.String, Ref: c.ref.String,
		AuthorID: c.authorID.String, AuthorName: c.authorName.String, Content: c.content.String, Addressed: c.addressed.String,
		CreatedAt: c.created.Time.UTC()}
	if c.dedupKey.Valid {
		k := c.dedupKey.String
		m.DedupKey = &k
	}
	return m
}

// Channel returns the channel with id, or ErrNotFound.
func (s *Store) Channel(ctx context.Context, id string) (Channel, error) {
	var ch Channel
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&ch).Error
	return ch, notFound(err)
}

// SetChannelCard binds a card to a channel; the next chat there plays it.
func (s *Store) SetChannelCard(ctx context.Context, channelID, cardID string) error {
	res := s.db.WithContext(ctx).Model(&Channel{}).Where("id = ?", channelID).
		Updates(map[string]any{"card_id": cardID, "updated_at": s.now()})
	if res.Error != nil {
		return fmt.Errorf("models: set channel card: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// MoveChannel puts the channel with id into the space spaceID, unless it
// is there already, and takes its current chat away: that chat stays in
// its own space with everything it wrote, and the channel's next turn
// starts a chat in the new space. It returns the chat that was current
// ("" for none) and whether the channel moved; ErrNotFound when there is
// no such channel.
func (s *Store) MoveChannel(ctx context.Context, id, spaceID string) (ended string, moved bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ch Channel
		if err := tx.Where("id = ?", id).Take(&ch).Error; err != nil {
			return notFound(err)
		}
		if ch.SpaceID == spaceID {
			return nil
		}
		// The space is part of the condition, so that of two processes
		// moving a channel at once only one ends its chat.
		res := tx.Model(&Channel{}).Where("id = ? AND space_id = ?", id, ch.SpaceID).
			Updates(map[string]any{"space_id": spaceID, "current_chat_id": "", "updated_at": s.now()})
		if res.Error != nil {
			return res.Error
		}
		ended, moved = ch.CurrentChatID, res.RowsAffected == 1
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("models: move channel %s: %w", id, err)
	}
	return ended, moved, err
}

// SetChannelMentionOnly sets whether only mentions and replies are turns.
func (s *Store) SetChannelMentionOnly(ctx context.Context, channelID string, on bool) error {
	return s.db.WithContext(ctx).Model(&Channel{}).Where("id = ?", channelID).
		Update("mention_only", on).Error
}

// StartChat opens a new chat of card in the channel, stores the opening
// message (if any) as its first message, and makes it the channel's current
// chat, all in one transaction. The card is the chat's cast, under its
// name in the card library.
func (s *Store) StartChat(ctx context.Context, channelID, cardID, spaceID, name string, opening *Message) (Chat, error) {
	cs := ChatStart{ChannelID: channelID, SpaceID: spaceID, Name: name, Cast: []CastMember{{CardID: cardID}}}
	if opening != nil {
		cs.Openings = []*Message{opening}
	}
	chat, _, err := s.StartScene(ctx, cs)
	return chat, err
}

// ChatStart is what a new chat starts with.
type ChatStart struct {
	ChannelID, SpaceID, Name string
	// Cast lists the members' CardID and Name ("" for the card's name in
	// the library); the first is the lead, the chat's CardID.
	Cast []CastMember `json:"cast"`
	// Openings are stored as the chat's first messages, in order; every
	// cast member perceives them.
	Openings []*Message `json:"openings"`
}

// StartScene opens a new chat with cs's cast, stores its openings and makes
// it the channel's current chat, all in one transaction. Each member goes
// by its card's name in the space (castName), so a card's memory is its
// own. It returns the chat and its cast rows.
func (s *Store) StartScene(ctx context.Context, cs ChatStart) (Chat, []CastMember, error) {
	if len(cs.Cast) == 0 {
		return Chat{}, nil, fmt.Errorf("models: start chat in %s: no cast", cs.ChannelID)
	}
	now := s.now()
	cardID := text.FitID(cs.Cast[0].CardID, IDSize)
	chat := Chat{ID: NewID(), ChannelID: cs.ChannelID, CardID: cardID, SpaceID: cs.SpaceID, Name: cs.Name, CreatedAt: now, ActiveAt: now}
	var cast []CastMember
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		parent := ""
		for _, o := range cs.Openings {
			o.ID, o.ChatID, o.ParentID, o.CreatedAt = NewID(), chat.ID, parent, now
			parent = o.ID
		}
		chat.HeadID = parent
		if err := tx.Create(&chat).Error; err != nil {
			return err
		}
		members := append([]CastMember(nil), cs.Cast...)
		for i := range members {
			if members[i].Name == "" {
				members[i].Name = implicitLead(tx, Chat{ID: chat.ID, CardID: members[i].CardID}).Name
			}
			name, err := castName(tx, cs.SpaceID, text.FitID(members[i].CardID, IDSize), members[i].Name, now)
			if err != nil {
				return err
			}
			members[i].Name = name
		}
		var pres []Presence
		cast, pres = castStartRows(chat, members, cs.Openings, now)
		if err := tx.Create(&cast).Error; err != nil {
			return err
		}
		if len(cs.Openings) > 0 {
			if err := tx.Create(cs.Openings).Error; err != nil {
				return err
			}
			if err := tx.Create(&pres).Error; err != nil {
				return err
			}
		}
		return tx.Model(&Channel{}).Where("id = ?", cs.ChannelID).
			Updates(map[string]any{"current_chat_id": chat.ID, "card_id": cardID, "updated_at": now}).Error
	})
	if err != nil {
		return Chat{}, nil, fmt.Errorf("models: start chat in %s: %w", cs.ChannelID, err)
	}
	return chat, cast, nil
}

// Chat returns the chat with id, or ErrNotFound.
func (s *Store) Chat(ctx context.Context, id string) (Chat, error) {
	var c Chat
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	return c, notFound(err)
}

// ChannelChats lists the chats of a channel, newest first.
func (s *Store) ChannelChats(ctx context.Context, channelID string) ([]Chat, error) {
	var chats []Chat
	err := s.db.WithContext(ctx).Where("channel_id = ?", channelID).Order("id DESC").Find(&chats).Error
	return chats, err
}

// Message returns the message with id, or ErrNotFound.
func (s *Store) Message(ctx context.Context, id string) (Message, error) {
	var m Message
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error
	return m, notFound(err)
}

// SeenDedupKeys returns which of keys are already stored.
func (s *Store) SeenDedupKeys(ctx context.Context, keys []string) (map[string]bool, error) {
	seen := map[string]bool{}
	if len(keys) == 0 {
		return seen, nil
	}
	var found []string
	err := s.db.WithContext(ctx).Model(&Message{}).Where("dedup_key IN ?", keys).Pluck("dedup_key", &found).Error
	for _, k := range found {
		seen[k] = true
	}
	return seen, err
}

// Append stores msgs as a chain under parentID and moves the chat's head to
// the last of them, atomically. It returns ErrStale if the chat's head is no
// longer expectHead, and ErrDuplicate if a message's dedup key was already
// stored. The messages get their parents filled in, and their ids unless
// the caller named them (models.NewID) to refer to them before they are
// stored.
func (s *Store) Append(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message) error {
	return s.appendMessages(ctx, chatID, expectHead, parentID, msgs, nil)
}

// appendMessages is Append that also deletes the inbox rows inboxIDs (see
// Consume).
func (s *Store) appendMessages(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message, inboxIDs []string) error {
	return s.appendWith(ctx, chatID, expectHead, parentID, msgs, inboxIDs, nil)
}

// appendWith is appendMessages that also records, in the same write, the
// messages' plain events and presence (rec; nil records nothing).
func (s *Store) appendWith(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message, inboxIDs []string, rec *TurnRecord) error {
	if len(msgs) == 0 {
		return nil
	}
	for _, m := range msgs {
		if err := messageFits(m); err != nil {
			return fmt.Errorf("models: append to chat %s: %w", chatID, err)
		}
	}
	if err := rec.check(len(msgs)); err != nil {
		return fmt.Errorf("models: append to chat %s: %w", chatID, err)
	}
	now := s.now()
	parent := parentID
	for _, m := range msgs {
		if m.ID == "" {
			m.ID = NewID()
		}
		m.ChatID = chatID
		m.ParentID = parent
		m.CreatedAt = now
		parent = m.ID
	}
	var moved bool
	var err error
	if s.dialect == "postgres" {
		moved, err = s.appendOne(ctx, chatID, expectHead, parentID, msgs, inboxIDs, rec, now)
	} else {
		moved, err = s.appendTx(ctx, chatID, expectHead, parentID, msgs, inboxIDs, rec, now)
	}
	if err == nil && !moved {
		// The head was not expectHead: find out whether the chat is gone.
		var n int64
		if err = s.db.WithContext(ctx).Model(&Chat{}).Where("id = ?", chatID).Count(&n).Error; err == nil {
			if n == 0 {
				return ErrNotFound
			}
			return ErrStale
		}
	}
	if err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) || isUniqueViolation(err) {
			return ErrDuplicate
		}
		if errors.Is(err, ErrStale) {
			return ErrStale
		}
		return fmt.Errorf("models: append to chat %s: %w", chatID, err)
	}
	return nil
}

// appendTx is Append as a transaction of two statements: moving the head
// only where it still is expectHead both checks and locks the chat.
func (s *Store) appendTx(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message, inboxIDs []string, rec *TurnRecord, now time.Time) (moved bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Chat{}).Where("id = ? AND head_id = ?", chatID, expectHead).
			Updates(map[string]any{"head_id": msgs[len(msgs)-1].ID, "active_at": now})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		moved = true
		if err := dropConsumed(tx, inboxIDs); err != nil {
			return err
		}
		if err := tx.Create(msgs).Error; err != nil {
			return err
		}
		return recordTurnTx(tx, chatID, parentID, msgs, rec, now)
	})
	return moved && err == nil, err
}

// appendOne is Append as one PostgreSQL statement, a turn's most frequent
// write: the head moves in a data-modifying CTE, and the messages are
// inserted only if it did. A unique violation undoes the whole statement.
// The inbox rows the messages came from go in the same statement, and the
// head moves only while all of them are still there.
func (s *Store) appendOne(ctx context.Context, chatID, expectHead, parentID string, msgs []*Message, inboxIDs []string, rec *TurnRecord, now time.Time) (bool, error) {
	var q strings.Builder
	args := make([]any, 0, 4+len(msgs)*appendColumns+2*len(inboxIDs))
	args = append(args, msgs[len(msgs)-1].ID, now, chatID, expectHead)
	q.WriteString(`WITH moved AS (UPDATE chats SET head_id = ?, active_at = ? WHERE id = ? AND head_id = ?`)
	if len(inboxIDs) > 0 {
		q.WriteString(` AND (SELECT count(*) FROM inbox_messages WHERE id IN (` + placeholders(len(inboxIDs)) + `)) = ` + fmt.Sprint(len(inboxIDs)))
		for _, id := range inboxIDs {
			args = append(args, id)
		}
	}
	q.WriteString(` RETURNING id)`)
	if len(inboxIDs) > 0 {
		q.WriteString(`, gone AS (DELETE FROM inbox_messages WHERE id IN (` + placeholders(len(inboxIDs)) + `) AND EXISTS (SELECT 1 FROM moved))`)
		for _, id := range inboxIDs {
			args = append(args, id)
		}
	}
	args = recordTurnCTE(&q, args, chatID, parentID, msgs, rec, now)
	q.WriteString(`
INSERT INTO messages (id, chat_id, parent_id, role, author_id, author_name, content, dedup_key, prompt_tokens, completion_tokens, speaker_card_id, whisper_to, created_at)
SELECT v.* FROM moved, (VALUES `)
	for i, m := range msgs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint, ?::bigint, ?::text, ?::text, ?::timestamptz)")
		args = append(args, m.ID, m.ChatID, m.ParentID, m.Role, m.AuthorID, m.AuthorName, m.Content, m.DedupKey, m.PromptTokens, m.CompletionTokens, m.SpeakerCardID, m.WhisperTo, m.CreatedAt)
	}
	q.WriteString(") AS v")
	res := s.db.WithContext(ctx).Exec(q.String(), args...)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == int64(len(msgs)), nil
}

// appendColumns is the number of columns appendOne writes per message.
const appendColumns = 13

// placeholders returns n comma-separated question marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func isUniqueViolation(err error) bool {
	msg := err.Error()
	return containsAny(msg, "UNIQUE constraint failed", "duplicate key value", "SQLSTATE 23505")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
