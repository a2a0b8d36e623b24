package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// UnrecordedTurns counts the turns of a chat with unsealed events, up to
// atMost: one query on the index of (chat, sealed, turn), however long the
// recorder has been failing (a /regen sibling's turn counts too; the
// recorder itself looks at the current branch only).
func (s *Store) UnrecordedTurns(ctx context.Context, chatID string, atMost int) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT COUNT(*) FROM (SELECT DISTINCT seq FROM events WHERE chat_id = ? AND sealed = ? LIMIT ?) t`,
		chatID, false, atMost).Row().Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("models: unrecorded turns of chat %s: %w", chatID, err)
	}
	return int(n), nil
}

// RecordBatch is what the recorder owes for a chat: the unsealed events of
// the current branch's turns that a later user message follows (all of
// them once the chat has ended), with who
// was present at each, and what the prompt shows with them.
type RecordBatch struct {
	Chat   Chat    `json:"chat"`
	Events []Event `json:"events"`
	// Present maps a message id to the characters who perceived it: under
	// a whisper only its two, so it is the audience of the message's
	// events (a told perception's via is checked against it).
	Present map[string][]string `json:"present"`
	// Unheard maps a message id to the characters present in the scene
	// who did not perceive it: the players carried past a whisper.
	Unheard map[string][]string `json:"unheard"`
	// Ledger is the chat's ledger snapshot ("" for none).
	Ledger string `json:"ledger"`
	// Views are the scene members' own ledgers by name (ViewLedgers).
	Views    map[string]string `json:"views"`
	Threads  []Thread          `json:"threads"`
	Entities []Entity          `json:"entities"`
	// LastDay and LastMinute are the latest story time already recorded.
	LastDay, LastMinute int
	// Pending counts the branch's unsealed turns the batch leaves out:
	// the newest, which waits for a later user message while the chat is
	// current (none once it has ended).
	Pending int `json:"pending"`
}

// recordWalkSQL walks back from the head and stops after the first message
// that has a sealed event: O(unrecorded), never O(history).
const recordWalkSQL = `
WITH RECURSIVE branch(id, parent_id, depth, sealed) AS (
  SELECT m.id, m.parent_id, 0, EXISTS (SELECT 1 FROM events e WHERE e.message_id = m.id AND e.sealed = ?)
  FROM messages m WHERE m.id = ?
  UNION ALL
  SELECT m.id, m.parent_id, b.depth + 1, EXISTS (SELECT 1 FROM events e WHERE e.message_id = m.id AND e.sealed = ?)
  FROM messages m JOIN branch b ON m.id = b.parent_id
  WHERE NOT b.sealed AND b.depth < ?
)
SELECT m.id, m.role FROM branch b JOIN messages m ON m.id = b.id WHERE NOT b.sealed ORDER BY b.depth DESC`

// RecordBatch loads what the recorder owes for the chat. It returns
// ErrNotFound when the chat is gone.
func (s *Store) RecordBatch(ctx context.Context, chatID string) (RecordBatch, error) {
	var b RecordBatch
	db := s.db.WithContext(ctx)
	chat, err := s.Chat(ctx, chatID)
	if err != nil {
		return b, err
	}
	b.Chat = chat
	if chat.HeadID == "" {
		return b, nil
	}
	rows, err := db.Raw(recordWalkSQL, true, chat.HeadID, true, MaxBranchWalk).Rows()
	if err != nil {
		return b, fmt.Errorf("models: record batch of chat %s: %w", chatID, err)
	}
	var ids, roles []string
	for rows.Next() {
		var id, role string
		if err := rows.Scan(&id, &role); err != nil {
			rows.Close()
			return b, err
		}
		ids, roles = append(ids, id), append(roles, role)
	}
	rows.Close()
	// The last turn (from the last run of user messages on) waits for a
	// later user message, so a /regen never meets sealed events; once the
	// chat has ended no /regen can reach it, and it is owed too.
	end := len(ids)
	ended, err := chatEnded(db, chatID)
	if err != nil {
		return b, fmt.Errorf("models: record batch of chat %s: %w", chatID, err)
	}
	if !ended {
		for end > 0 && roles[end-1] != "user" {
			end--
		}
		for end > 0 && roles[end-1] == "user" {
			end--
		}
	}
	if end < len(ids) {
		b.Pending = 1
	}
	ids = ids[:end]
	if err := s.recordContext(db, &b); err != nil {
		return b, fmt.Errorf("models: record batch of chat %s: %w", chatID, err)
	}
	if len(ids) == 0 {
		return b, nil
	}
	if err := db.Where(s.oneOf("message_id IN ? AND sealed = ?"), s.ids(ids), false).Order("seq, message_id, ord").Find(&b.Events).Error; err != nil {
		return b, fmt.Errorf("models: record batch of chat %s: %w", chatID, err)
	}
	// Only who perceived a message was present at it: a player carried past
	// a whisper, or a member away from it, saw none of its events.
	var pres []Presence
	if err := db.Where(s.oneOf("message_id IN ? AND perceived = ?"), s.ids(ids), true).Order("character_name").Find(&pres).Error; err != nil {
		return b, fmt.Errorf("models: record batch of chat %s: %w", chatID, err)
	}
	b.Present, b.Unheard = map[string][]string{}, map[string][]string{}
	for _, p := range pres {
		if p.Perceived {
			b.Present[p.MessageID] = append(b.Present[p.MessageID], p.Character)
		} else {
			b.Unheard[p.MessageID] = append(b.Unheard[p.MessageID], p.Character)
		}
	}
	return b, nil
}

// recordContext reads the ledger, open threads, entities and last story
// time of b's chat.
func (s *Store) recordContext(db *gorm.DB, b *RecordBatch) error {
	var l Ledger
	err := db.Where("chat_id = ?", b.Chat.ID).Take(&l).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	b.Ledger = l.Snapshot
	var views []LedgerView
	if err := db.Where("chat_id = ?", b.Chat.ID).Find(&views).Error; err != nil {
		return err
	}
	b.Views = make(map[string]string, len(views))
	for _, v := range views {
		b.Views[v.Character] = v.Snapshot
	}
	if err := db.Where("chat_id = ? AND open = ?", b.Chat.ID, true).Order("id").Find(&b.Threads).Error; err != nil {
		return err
	}
	if err := db.Where("space_id = ?", b.Chat.SpaceID).Order("name").Limit(maxEntities).Find(&b.Entities).Error; err != nil {
		return err
	}
	var last []Event
	if err := db.Select("day, minute").Where("chat_id = ? AND sealed = ?", b.Chat.ID, true).
		Order("day DESC, minute DESC").Limit(1).Find(&last).Error; err != nil {
		return err
	}
	if len(last) == 1 {
		b.LastDay, b.LastMinute = last[0].Day, last[0].Minute
	}
	return nil
}

// chatEnded reports whether the chat is no channel's current chat: /new,
// another card or cast, or a move to another space ended it. A chat never
// becomes current again (a channel's current chat is only ever a new one),
// so nothing — no turn, no /regen — changes its branch any more.
func chatEnded(db *gorm.DB, chatID string) (bool, error) {
	var n int64
	if err := db.Model(&Channel{}).Where("current_chat_id = ?", chatID).Count(&n).Error; err != nil {
		return false, err
	}
	return n == 0, nil
}

// EndedTurnOwed reports whether the chat has ended with its last turn not
// yet recorded: the recorder owes it now, though no batch fills (the
// sweeper's rule for an ended chat). One look at the head and its parent.
func (s *Store) EndedTurnOwed(ctx context.Context, chat Chat) (bool, error) {
	db := s.db.WithContext(ctx)
	if chat.HeadID == "" {
		return false, nil
	}
	ended, err := chatEnded(db, chat.ID)
	if err != nil || !ended {
		return false, err
	}
	var n int64
	err = db.Model(&Event{}).Where("chat_id = ? AND sealed = ? AND message_id IN (?)", chat.ID, false,
		db.Model(&Message{}).Select("id").Where("id = ? OR id = (?)", chat.HeadID, db.Model(&Message{}).Select("parent_id").Where("id = ?", chat.HeadID))).
		Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("models: ended turn of chat %s: %w", chat.ID, err)
	}
	return n > 0, nil
}

// maxEntities bounds the entities a batch looks through for the ones it
// mentions.
const maxEntities = 5000

// RecordInstall is a validated recorder answer, ready to install.
type RecordInstall struct {
	ChatID  string `json:"chat_id"`
	SpaceID string `json:"space_id"`
	// EventIDs is the batch: every one must still be unsealed.
	EventIDs []string `json:"event_i_ds"`
	// Enrich updates the batch's events (importance, about, place, time).
	Enrich []Event `json:"enrich"`
	// Changes are new change events (sealed at once).
	Changes     []Event      `json:"changes"`
	Perceptions []Perception `json:"perceptions"`
	Threads     []Thread     `json:"threads"`
	// Resolve maps a thread id to the event that resolved it.
	Resolve map[string]string `json:"resolve"`
	// Ledger is the new ledger snapshot; nil keeps the old.
	Ledger *string `json:"ledger"`
	// Views are the scene members' new ledgers by name (LedgerView); a
	// member left out keeps its row.
	Views         map[string]string `json:"views"`
	Entities      []Entity          `json:"entities"`
	Relationships []Relationship    `json:"relationships"`
	// Knowledge edges name their entity in EntityID until installed.
	Knowledge  []Knowledge `json:"knowledge"`
	Characters []Character `json:"characters"`
}

// enrichRow is one event's row in enrichEvents' statement.
const enrichRow = "SELECT CAST(? AS TEXT) AS id, CAST(? AS INTEGER) AS importance, CAST(? AS TEXT) AS about, CAST(? AS TEXT) AS place, CAST(? AS INTEGER) AS day, CAST(? AS INTEGER) AS minute"

// enrichEvents writes what the recorder said of each event (importance,
// about, place, story time) in one statement per hundred events: one per
// event made the recorder's install its most frequent statement.
func enrichEvents(tx *gorm.DB, events []Event) error {
	for part := range slices.Chunk(events, 100) {
		rows := make([]string, len(part))
		args := make([]any, 0, 6*len(part))
		for i, e := range part {
			rows[i] = enrichRow
			args = append(args, e.ID, e.Importance, e.About, FitName(e.Place, NameSize), e.Day, e.Minute)
		}
		q := "UPDATE events SET importance = v.importance, about = v.about, place = v.place, day = v.day, minute = v.minute FROM (" +
			strings.Join(rows, " UNION ALL ") + ") AS v WHERE events.id = v.id"
		if err := tx.Exec(q, args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// sealBatch enriches and seals the batch's events, or returns ErrStale
// when some event of it is sealed already (the caller holds the chat's
// lock, which every sealing takes).
//
// On PostgreSQL it is one statement: the count of the open events, the
// enrichment and the seal were three, and the seal wrote each event's row
// a second time, with new entries in every index of events since sealed
// is indexed. Enrich entries outside the batch are not written.
func (s *Store) sealBatch(tx *gorm.DB, r RecordInstall) error {
	if tx.Dialector.Name() != "postgres" {
		var open int64
		if err := tx.Model(&Event{}).Where(s.oneOf("id IN ? AND sealed = ?"), s.ids(r.EventIDs), false).Count(&open).Error; err != nil {
			return err
		}
		if int(open) != len(r.EventIDs) {
			return ErrStale
		}
		s.paused("install record")
		if err := enrichEvents(tx, r.Enrich); err != nil {
			return err
		}
		return tx.Model(&Event{}).Where(s.oneOf("id IN ?"), s.ids(r.EventIDs)).Update("sealed", true).Error
	}
	s.paused("install record")
	if len(r.EventIDs) == 0 {
		return nil
	}
	ids, abouts, places := make(textArray, len(r.Enrich)), make(textArray, len(r.Enrich)), make(textArray, len(r.Enrich))
	imps, days, minutes := make(int64Array, len(r.Enrich)), make(int64Array, len(r.Enrich)), make(int64Array, len(r.Enrich))
	for i, e := range r.Enrich {
		ids[i], abouts[i], places[i] = e.ID, e.About, FitName(e.Place, NameSize)
		imps[i], days[i], minutes[i] = int64(e.Importance), int64(e.Day), int64(e.Minute)
	}
	res := tx.Exec(sealBatchPostgres, textArray(r.EventIDs), ids, imps, abouts, places, days, minutes)
	if res.Error != nil {
		return res.Error
	}
	if int(res.RowsAffected) != len(r.EventIDs) {
		return ErrStale
	}
	return nil
}

// sealBatchPostgres seals the batch's open events (the first array) and
// writes what the recorder found of each (the others, by id; an event with
// no entry keeps its columns). Its text is fixed, each column an array, so
// it is planned once per connection: a statement of UNION ALL rows had a
// text per batch size, and planning it took twice as long as running it.
const sealBatchPostgres = `UPDATE events SET sealed = TRUE,
  importance = COALESCE(v.importance, events.importance), about = COALESCE(v.about, events.about),
  place = COALESCE(v.place, events.place), day = COALESCE(v.day, events.day), minute = COALESCE(v.minute, events.minute)
FROM (SELECT b.id, en.importance, en.about, en.place, en.day, en.minute FROM unnest(CAST(? AS text[])) AS b(id)
  LEFT JOIN unnest(CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[]))
    AS en(id, importance, about, place, day, minute) ON en.id = b.id) AS v
WHERE events.id = v.id AND events.sealed = FALSE`

// InstallRecord installs a recorder batch in one transaction and seals its
// events: all of it, or nothing. It holds the chat's lock and returns
// ErrChatGone when the chat was forgotten, ErrStale when some event of the
// batch was sealed meanwhile (another run recorded it).
func (s *Store) InstallRecord(ctx context.Context, r RecordInstall) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.lockChat(tx, r.ChatID); err != nil {
			return err
		}
		if err := s.sealBatch(tx, r); err != nil {
			return err
		}
		if err := createAll(tx, r.Changes, r.Perceptions, r.Threads); err != nil {
			return err
		}
		for id, by := range r.Resolve {
			if err := tx.Model(&Thread{}).Where("id = ? AND chat_id = ?", id, r.ChatID).
				Updates(map[string]any{"open": false, "closed_by": by}).Error; err != nil {
				return err
			}
		}
		if r.Ledger != nil {
			if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chat_id"}},
				DoUpdates: clause.AssignmentColumns([]string{"snapshot", "updated_at"})}).
				Create(&Ledger{ChatID: r.ChatID, Snapshot: *r.Ledger, UpdatedAt: now}).Error; err != nil {
				return err
			}
		}
		if err := installViews(tx, r, now); err != nil {
			return err
		}
		if err := installWorld(tx, r, now); err != nil {
			return err
		}
		return oweIndex(tx, r)
	})
	if err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrChatGone) {
			return err
		}
		return fmt.Errorf("models: install record for chat %s: %w", r.ChatID, err)
	}
	// The record stands; its index terms follow in short transactions. One
	// that fails stays owed to the chat's next install.
	if err := s.indexOwed(ctx, r.ChatID); err != nil {
		s.log.Warn("index record: terms stay owed", "chat_id", r.ChatID, "err", err)
	}
	return nil
}

// installViews writes the members' ledgers of a record.
func installViews(tx *gorm.DB, r RecordInstall, now time.Time) error {
	if len(r.Views) == 0 {
		return nil
	}
	rows := make([]LedgerView, 0, len(r.Views))
	for name, snap := range r.Views {
		rows = append(rows, LedgerView{ChatID: r.ChatID, Character: FitName(name, NameSize), Snapshot: snap, UpdatedAt: now})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Character < rows[j].Character })
	return tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chat_id"}, {Name: "character_name"}},
		DoUpdates: clause.AssignmentColumns([]string{"snapshot", "updated_at"})}).Create(&rows).Error
}

// createAll inserts each non-empty slice of rows in batches.
func createAll(tx *gorm.DB, slices ...any) error {
	for _, rows := range slices {
		n := 0
		switch v := rows.(type) {
		case []Event:
			n = len(v)
		case []Perception:
			n = len(v)
		case []Thread:
			n = len(v)
		case []Character:
			n = len(v)
		case []Entity:
			n = len(v)
		case []Knowledge:
			n = len(v)
		}
		if n == 0 {
			continue
		}
		if err := tx.CreateInBatches(rows, 200).Error; err != nil {
			return err
		}
	}
	return nil
}

// installWorld writes the characters, entities, relationships and
// knowledge of a record.
func installWorld(tx *gorm.DB, r RecordInstall, now time.Time) error {
	for i := range r.Characters {
		r.Characters[i].CreatedAt = now
	}
	for i := range r.Entities {
		r.Entities[i].CreatedAt = now
	}
	for _, rows := range []any{r.Characters, r.Entities} {
		if err := createAll(tx.Clauses(clause.OnConflict{DoNothing: true}), rows); err != nil {
			return err
		}
	}
	// A cast character's aliases come from its card, not from a chat: the
	// card's current ones replace what an older version of it gave.
	for _, c := range r.Characters {
		if c.Kind != CharacterCast {
			continue
		}
		if err := tx.Model(&Character{}).Where("space_id = ? AND name = ? AND kind = ? AND card_id = ? AND aliases <> ?", r.SpaceID, c.Name, CharacterCast, c.CardID, c.Aliases).
			Update("aliases", c.Aliases).Error; err != nil {
			return err
		}
	}
	if err := installKnowledge(tx, r, now); err != nil {
		return err
	}
	for _, rel := range r.Relationships {
		var old Relationship
		err := tx.Where("space_id = ? AND from_name = ? AND to_name = ?", r.SpaceID, rel.FromName, rel.ToName).Take(&old).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			rel.ID, rel.SpaceID, rel.ChatID, rel.Chats, rel.UpdatedAt = NewID(), r.SpaceID, r.ChatID, r.ChatID, now
			if err := tx.Create(&rel).Error; err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			chats := old.Chats
			if !strings.Contains(chats, r.ChatID) {
				chats = strings.TrimSpace(chats + "\n" + r.ChatID)
			}
			if err := tx.Model(&Relationship{}).Where("id = ?", old.ID).Updates(map[string]any{
				"description": rel.Description, "chat_id": r.ChatID, "event_id": rel.EventID, "chats": chats, "updated_at": now}).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// installKnowledge resolves the entity names of the record's knowledge
// edges and writes the edges a character does not hold yet.
func installKnowledge(tx *gorm.DB, r RecordInstall, now time.Time) error {
	if len(r.Knowledge) == 0 {
		return nil
	}
	var names []string
	for _, k := range r.Knowledge {
		names = append(names, k.EntityID)
	}
	var ents []Entity
	if err := tx.Where("space_id = ? AND name IN ?", r.SpaceID, names).Find(&ents).Error; err != nil {
		return err
	}
	byName := map[string]string{}
	for _, e := range ents {
		byName[e.Name] = e.ID
	}
	var held []Knowledge
	if err := tx.Where("space_id = ? AND entity_id IN ?", r.SpaceID, mapValues(byName)).Find(&held).Error; err != nil {
		return err
	}
	has := map[string]bool{}
	for _, k := range held {
		has[k.Character+"\x00"+k.EntityID] = true
	}
	var edges []Knowledge
	for _, k := range r.Knowledge {
		id := byName[k.EntityID]
		if id == "" || has[k.Character+"\x00"+id] {
			continue
		}
		has[k.Character+"\x00"+id] = true
		k.ID, k.SpaceID, k.ChatID, k.EntityID, k.CreatedAt = NewID(), r.SpaceID, r.ChatID, id, now
		edges = append(edges, k)
	}
	return createAll(tx, edges)
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// SceneKnowledge is what a character brings to a scene: its own
// relationships (to → description), the places and exits it knows, and
// its own ledger of the chat when it has one (LedgerView).
type SceneKnowledge struct {
	Relationships map[string]string `json:"relationships"`
	Known         []string          `json:"known"`
	// Ledger is the character's own ledger of the chat; HasLedger is false
	// when it has none (see MemberLedger).
	Ledger    string `json:"ledger"`
	HasLedger bool   `json:"has_ledger"`
}

// sceneSQL reads a character's relationships, the places and exits it
// knows and its own ledger of a chat in one round trip.
const sceneSQL = `SELECT 'rel', to_name, description FROM relationships WHERE space_id = ? AND from_name = ?
UNION ALL
SELECT 'known', e.name, e.kind FROM knowledge_edges k JOIN entities e ON e.id = k.entity_id
WHERE k.space_id = ? AND k.character_name = ? AND e.kind IN ('place', 'exit')
UNION ALL
SELECT 'ledger', character_name, snapshot FROM ledger_views WHERE chat_id = ? AND character_name = ?`

// Scene reads what character knows in its space, and its own ledger of
// the chat, for a turn's scene: one query.
func (s *Store) Scene(ctx context.Context, spaceID, chatID, character string) (SceneKnowledge, error) {
	out := SceneKnowledge{Relationships: map[string]string{}}
	character = FitName(character, NameSize)
	rows, err := s.db.WithContext(ctx).Raw(sceneSQL, spaceID, character, spaceID, character, chatID, character).Rows()
	if err != nil {
		return out, fmt.Errorf("models: scene of %s: %w", character, err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, name, text string
		if err := rows.Scan(&kind, &name, &text); err != nil {
			return out, fmt.Errorf("models: scene of %s: %w", character, err)
		}
		switch kind {
		case "rel":
			out.Relationships[name] = text
		case "ledger":
			out.Ledger, out.HasLedger = text, true
		default:
			out.Known = append(out.Known, name)
		}
	}
	return out, rows.Err()
}

// EnsureLore stores the lore entities of a space that restricted lorebook
// entries stand for (ChatID "": no chat introduced them, and no /forget
// removes them), so the recorder sees them when a batch mentions them and
// can grant a character their knowledge. Existing names are left alone.
func (s *Store) EnsureLore(ctx context.Context, spaceID string, lore []Entity) error {
	if len(lore) == 0 {
		return nil
	}
	now := s.now()
	for i := range lore {
		lore[i].ID, lore[i].SpaceID, lore[i].Kind, lore[i].CreatedAt = NewID(), spaceID, "lore", now
		lore[i].Name = FitName(lore[i].Name, NameSize)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(lore, 200).Error
	if err != nil {
		return fmt.Errorf("models: ensure lore of %s: %w", spaceID, err)
	}
	return nil
}

// KnownLore lists the names and aliases of the lore entities character was
// granted in its space.
func (s *Store) KnownLore(ctx context.Context, spaceID, character string) ([]string, error) {
	var ents []Entity
	err := s.db.WithContext(ctx).Table("entities e").Select("e.name, e.aliases").
		Joins("JOIN knowledge_edges k ON k.entity_id = e.id").
		Where("k.space_id = ? AND k.character_name = ? AND e.kind = ?", spaceID, character, "lore").Scan(&ents).Error
	if err != nil {
		return nil, fmt.Errorf("models: known lore of %s: %w", character, err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
		for _, a := range strings.Split(e.Aliases, "\n") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, a)
			}
		}
	}
	return out, nil
}
