package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"troupe/recall"
)

// RecallTerm is one entry of the recall index, an inverted index kept in
// the database itself (no extension, so SQLite and PostgreSQL alike): a
// keyword of a perception's or belief's text (words for alphabetic
// scripts, character bigrams for CJK; recall.Keywords), or the cue term of
// a name it is about or who acted in it (recall.CueTerm), for the character
// whose memory it is. It is written in the transaction that writes its
// item and deleted with it.
type RecallTerm struct {
	ItemID    string `gorm:"primaryKey;size:26;index:idx_recall_term,priority:5" json:"item_id"`
	Term      string `gorm:"primaryKey;size:64;index:idx_recall_term,priority:3" json:"term"`
	SpaceID   string `gorm:"size:128;not null;index:idx_recall_term,priority:1" json:"space_id"`
	Character string `gorm:"column:character_name;size:200;not null;index:idx_recall_term,priority:2" json:"character"`
	// Seq is the item's space turn: a search takes the newest entries of a
	// common term first. The search index covers the item and its kind, so
	// a search never reads the table.
	Seq int64 `gorm:"not null;index:idx_recall_term,priority:4" json:"seq"`
	// Kind is "p" for a perception, "b" for a belief.
	Kind string `gorm:"size:1;not null;index:idx_recall_term,priority:6" json:"kind"`
	// ChatID is a perception's chat; "" for a belief. It has no index of
	// its own: forgetting a chat deletes its perceptions' entries by their
	// ids (forgetRecord), and indexOwed writes entries only for
	// perceptions that still owe them, so none outlives its perception.
	// An index of the chat cost every entry one more B-tree insert.
	ChatID string `gorm:"size:26;not null;default:''" json:"chat_id"`
}

// Recall item kinds in the index.
const (
	RecallPerception = "p"
	RecallBelief     = "b"
)

func recallTables() []any {
	return []any{&RecallTerm{}, &RecallOwed{}, &RecallKept{}, &RecallKeptItem{}, &RecallDiagnostic{}, &RecallDiagnosticItem{}}
}

// recallItem is what the index needs of an item.
type recallItem struct {
	id, kind, chat, char string
	seq                  int64
	text                 string
	names                []string
}

// recallTerms lists the index entries of items in space: their keywords
// and the cue terms of their names and those names' aliases.
func recallTerms(tx *gorm.DB, space string, items []recallItem) ([]RecallTerm, error) {
	var names []string
	for _, it := range items {
		names = append(names, it.names...)
	}
	aliases, err := aliasesOf(tx, space, names)
	if err != nil {
		return nil, err
	}
	var out []RecallTerm
	for _, it := range items {
		seen := map[string]bool{}
		add := func(term string) {
			if term != "" && !seen[term] {
				seen[term] = true
				out = append(out, RecallTerm{ItemID: it.id, Term: term, SpaceID: space, Character: FitName(it.char, NameSize),
					Seq: it.seq, Kind: it.kind, ChatID: it.chat})
			}
		}
		for _, t := range recall.Keywords(it.text) {
			add(t)
		}
		for _, n := range it.names {
			add(recall.CueTerm(n))
			for _, a := range aliases[n] {
				add(recall.CueTerm(a))
			}
		}
	}
	return out, nil
}

// aliasesOf reads the aliases of the characters and entities of space
// with the given names: two queries, however many names.
func aliasesOf(tx *gorm.DB, space string, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(names) == 0 {
		return out, nil
	}
	for _, table := range []string{"characters", "entities"} {
		var rows []struct{ Name, Aliases string }
		if err := tx.Table(table).Select("name, aliases").Where(inList(tx, "space_id = ? AND name IN ? AND aliases <> ''"), space, listArg(tx, names)).
			Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Name] = append(out[r.Name], lines(r.Aliases)...)
		}
	}
	return out, nil
}

func writeRecallTerms(tx *gorm.DB, terms []RecallTerm) error {
	if len(terms) == 0 {
		return nil
	}
	if tx.Dialector.Name() == "postgres" {
		return writeRecallTermsPostgres(tx, terms)
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(terms, 500).Error
}

// insertRecallTerms writes terms with one statement of fixed text,
// each column an array: a multi-row INSERT of 128 terms has 896
// parameters, and PostgreSQL planned each one anew (troupe bench spent a
// fifth of the recorder's database time planning them).
const insertRecallTerms = `INSERT INTO recall_terms (item_id, term, space_id, character_name, seq, kind, chat_id)
  SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]),
    CAST(? AS bigint[]), CAST(? AS text[]), CAST(? AS text[]))
  ON CONFLICT DO NOTHING`

func writeRecallTermsPostgres(tx *gorm.DB, terms []RecallTerm) error {
	cols := make([]textArray, 7)
	for i := range cols {
		cols[i] = make(textArray, len(terms))
	}
	for i, t := range terms {
		cols[0][i], cols[1][i], cols[2][i], cols[3][i] = t.ItemID, t.Term, t.SpaceID, t.Character
		cols[4][i], cols[5][i], cols[6][i] = strconv.FormatInt(t.Seq, 10), t.Kind, t.ChatID
	}
	return tx.Exec(insertRecallTerms, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6]).Error
}

// RecallOwed marks a perception whose index terms are not written yet. A
// record install marks its perceptions in its own transaction and writes
// their terms just after it, in short transactions of their own
// (indexOwed): a batch's few hundred terms held SQLite's one writer for
// 15–35 ms, and every turn that meanwhile stored a message waited for
// them. A mark left by a crash or an error is taken up by the chat's next
// install, or by the sweeper (IndexOwed).
type RecallOwed struct {
	ItemID string `gorm:"primaryKey;size:26" json:"item_id"`
	ChatID string `gorm:"size:26;not null;index" json:"chat_id"`
}

// indexChunkTerms bounds the terms one transaction of indexOwed writes.
const indexChunkTerms = 128

// oweIndex marks, in a record install's transaction, the perceptions it
// installs that recall can find (not those of mode "none").
func oweIndex(tx *gorm.DB, r RecordInstall) error {
	var owed []RecallOwed
	for _, p := range r.Perceptions {
		if p.Mode != "none" {
			owed = append(owed, RecallOwed{ItemID: p.ID, ChatID: p.ChatID})
		}
	}
	if len(owed) == 0 {
		return nil
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(owed, 500).Error
}

// maxOwedChats bounds the chats one IndexOwed takes up.
const maxOwedChats = 1000

// IndexOwed writes the index terms still owed in any chat: the sweeper's
// catch-up for marks that a crash or an error left in a chat that may
// record nothing more. Marks of perceptions that are gone are dropped. It
// returns how many chats owed terms.
func (s *Store) IndexOwed(ctx context.Context) (int, error) {
	db := s.db.WithContext(ctx)
	if err := db.Where("NOT EXISTS (SELECT 1 FROM perceptions p WHERE p.id = recall_oweds.item_id)").Delete(&RecallOwed{}).Error; err != nil {
		return 0, fmt.Errorf("models: index owed terms: %w", err)
	}
	var chats []string
	if err := db.Model(&RecallOwed{}).Distinct("chat_id").Order("chat_id").Limit(maxOwedChats).Pluck("chat_id", &chats).Error; err != nil {
		return 0, fmt.Errorf("models: index owed terms: %w", err)
	}
	for i, c := range chats {
		if err := s.indexOwed(ctx, c); err != nil {
			return i, fmt.Errorf("models: index owed terms of chat %s: %w", c, err)
		}
	}
	return len(chats), nil
}

// indexOwed writes the index terms the chat's perceptions are owed: their
// text and gist, and the names their event is about and its actor, with
// those names' aliases. The terms are worked out outside any transaction;
// each transaction writes at most indexChunkTerms of them, checks the
// chat still exists and clears its items' marks. A chat forgotten
// meanwhile ends it quietly.
func (s *Store) indexOwed(ctx context.Context, chatID string) error {
	db := s.db.WithContext(ctx)
	var rows []struct {
		ID, Text, Gist, Character, SpaceID, Actor, About string
		Seq                                              int64
	}
	err := db.Table("recall_oweds").
		Select("perceptions.id, perceptions.text, perceptions.gist, perceptions.character_name AS character, perceptions.space_id, perceptions.seq, events.actor, events.about").
		Joins("JOIN perceptions ON perceptions.id = recall_oweds.item_id").
		Joins("LEFT JOIN events ON events.id = perceptions.event_id").
		Where("recall_oweds.chat_id = ?", chatID).Order("perceptions.seq, perceptions.id").Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return err
	}
	items := make([]recallItem, len(rows))
	for i, p := range rows {
		items[i] = recallItem{id: p.ID, kind: RecallPerception, chat: chatID, char: p.Character, seq: p.Seq,
			text: p.Text + "\n" + p.Gist, names: append(lines(p.About), p.Actor)}
	}
	terms, err := recallTerms(db, rows[0].SpaceID, items)
	if err != nil {
		return err
	}
	s.paused("index owed")
	// recallTerms lists each item's terms together, in the items' order.
	for len(items) > 0 {
		var ids []string
		n := 0
		for len(items) > 0 && (len(ids) == 0 || n+countTerms(terms[n:], items[0].id) <= indexChunkTerms) {
			n += countTerms(terms[n:], items[0].id)
			ids = append(ids, items[0].id)
			items = items[1:]
		}
		chunk := terms[:n]
		terms = terms[n:]
		err := db.Transaction(func(tx *gorm.DB) error {
			if _, err := s.lockChat(tx, chatID); err != nil {
				return err
			}
			owing, err := takeOwed(tx, ids)
			if err != nil {
				return err
			}
			return writeRecallTerms(tx, slices.DeleteFunc(chunk, func(t RecallTerm) bool { return !owing[t.ItemID] }))
		})
		if errors.Is(err, ErrChatGone) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("models: index chat %s: %w", chatID, err)
		}
	}
	return nil
}

// takeOwed clears the marks of the given items and returns those that
// were still there. A perception deleted since its terms were worked out
// took its mark with it (DeletePerception, ForgetChat), under the chat's
// lock that the caller holds too, so its terms are not written: every
// entry of the index belongs to a perception that exists.
func takeOwed(tx *gorm.DB, ids []string) (map[string]bool, error) {
	var taken []string
	if err := tx.Raw(inList(tx, "DELETE FROM recall_oweds WHERE item_id IN ? RETURNING item_id"), listArg(tx, ids)).Scan(&taken).Error; err != nil {
		return nil, err
	}
	owing := make(map[string]bool, len(taken))
	for _, id := range taken {
		owing[id] = true
	}
	return owing, nil
}

// countTerms counts the leading terms of item id.
func countTerms(terms []RecallTerm, id string) int {
	n := 0
	for n < len(terms) && terms[n].ItemID == id {
		n++
	}
	return n
}

// indexBelief (re)indexes one belief in its install's transaction.
func indexBelief(tx *gorm.DB, b Belief) error {
	if err := tx.Where("item_id = ?", b.ID).Delete(&RecallTerm{}).Error; err != nil {
		return err
	}
	terms, err := recallTerms(tx, b.SpaceID, []recallItem{{id: b.ID, kind: RecallBelief, char: b.Character,
		seq: b.ChangedSeq, text: b.Text, names: lines(b.About)}})
	if err != nil {
		return err
	}
	return writeRecallTerms(tx, terms)
}

// RecallSearch is one turn's index search for a character's memories.
type RecallSearch struct {
	SpaceID, Character string
	// Terms are the query's keywords and cue terms.
	Terms []string `json:"terms"`
	// PerTerm bounds the entries read per term: the newest first.
	PerTerm int `json:"per_term"`
}

// maxSearchTerms bounds the terms of one search statement.
const maxSearchTerms = 480

// RecallHits searches the index in one statement: for each term, the
// newest PerTerm entries of the character's items, so that a search costs
// terms × PerTerm rows at most, however long the story.
func (s *Store) RecallHits(ctx context.Context, q RecallSearch) ([]recall.Hit, error) {
	terms := q.Terms
	if len(terms) > maxSearchTerms {
		terms = terms[:maxSearchTerms]
	}
	if len(terms) == 0 {
		return nil, nil
	}
	char := FitName(q.Character, NameSize)
	var out []recall.Hit
	var err error
	if s.dialect == "sqlite" {
		out, err = s.recallHitsSQLite(ctx, q.SpaceID, char, terms, max(q.PerTerm, 1))
	} else {
		out, err = s.recallHitsPostgres(ctx, q.SpaceID, char, terms, max(q.PerTerm, 1))
	}
	if err != nil {
		return nil, fmt.Errorf("models: recall search for %s: %w", q.Character, err)
	}
	return out, nil
}

// recallHitsPostgres reads each term's newest entries in one statement of
// fixed text, so that it is prepared and planned once per connection: the
// terms come as an array, and each one's bounded range of the search index
// is a lateral subquery. Each term comes back as one row, its entries (kind
// and id, newest first) joined by commas: a row per entry cost the turn
// more in the driver than the search cost the database.
const recallHitsPostgres = `SELECT t.term, COALESCE(h.entries, '') FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS t(term, n)
  CROSS JOIN LATERAL (SELECT string_agg(x.kind || x.item_id, ',' ORDER BY x.seq DESC) AS entries FROM
    (SELECT item_id, kind, seq FROM recall_terms WHERE space_id = ? AND character_name = ? AND term = t.term
     ORDER BY seq DESC LIMIT ?) AS x) AS h
  ORDER BY t.n`

func (s *Store) recallHitsPostgres(ctx context.Context, space, char string, terms []string, perTerm int) ([]recall.Hit, error) {
	rows, err := s.db.WithContext(ctx).Raw(recallHitsPostgres, textArray(terms), space, char, perTerm).Rows()
	if err != nil {
		return nil, err
	}
	return scanJoinedHits(rows)
}

// scanJoinedHits reads rows of a term and its entries joined by commas,
// each entry its kind's letter and the item's id.
func scanJoinedHits(rows *sql.Rows) ([]recall.Hit, error) {
	defer rows.Close()
	var out []recall.Hit
	for rows.Next() {
		var term, entries string
		if err := rows.Scan(&term, &entries); err != nil {
			return nil, err
		}
		out = slices.Grow(out, strings.Count(entries, ",")+1)
		for e := range strings.SplitSeq(entries, ",") {
			if len(e) < 2 {
				continue
			}
			out = append(out, recall.Hit{ID: e[1:], Kind: hitKind(e[:1]), Term: term})
		}
	}
	return out, rows.Err()
}

// textArray is a PostgreSQL text[] parameter. pgx sends it in binary as
// an array (pgtype.ArrayGetter); Value, a literal with each element quoted
// and its quotes and backslashes escaped, serves any other driver. Given
// only the literal, pgx parsed it back into an array to send it: about 5%
// of troupe bench's process CPU went to writing and re-reading literals.
type textArray []string

// Dimensions implements pgtype.ArrayGetter.
func (a textArray) Dimensions() []pgtype.ArrayDimension { return listDims(len(a)) }

// Index implements pgtype.ArrayGetter.
func (a textArray) Index(i int) any { return a[i] }

// IndexType implements pgtype.ArrayGetter.
func (a textArray) IndexType() any { return "" }

// Value implements driver.Valuer.
func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, t := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range t {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// int64Array is a PostgreSQL bigint[] parameter, as textArray.
type int64Array []int64

// Dimensions implements pgtype.ArrayGetter.
func (a int64Array) Dimensions() []pgtype.ArrayDimension { return listDims(len(a)) }

// listDims is the one dimension of a list of n: empty when n is 0, never
// NULL (the literal never was).
func listDims(n int) []pgtype.ArrayDimension {
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

// Index implements pgtype.ArrayGetter.
func (a int64Array) Index(i int) any { return a[i] }

// IndexType implements pgtype.ArrayGetter.
func (a int64Array) IndexType() any { return int64(0) }

// Value implements driver.Valuer.
func (a int64Array) Value() (driver.Value, error) {
	b := make([]byte, 0, 2+8*len(a))
	b = append(b, '{')
	for i, n := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, '}')), nil
}

// recallHitsSQLite is recallHitsPostgres's search in a statement whose text
// does not grow with the terms, so that a connection prepares it once
// (sqlitestmt; compiling one subquery per term cost more than running
// them, when every statement was compiled at each execution). The
// terms come as a JSON array; each one's bounded index range is read by a
// correlated subquery from the search index alone, and comes back as one
// row: the kind and id of each entry, newest first, joined by commas.
const recallHitsSQLite = `SELECT j.value, COALESCE((SELECT group_concat(e, ',') FROM
  (SELECT x.kind || x.item_id AS e FROM recall_terms AS x WHERE x.space_id = ? AND x.character_name = ? AND x.term = j.value
   ORDER BY x.seq DESC LIMIT ?)), '') FROM json_each(?) AS j`

func (s *Store) recallHitsSQLite(ctx context.Context, space, char string, terms []string, perTerm int) ([]recall.Hit, error) {
	js, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.WithContext(ctx).Raw(recallHitsSQLite, space, char, perTerm, string(js)).Rows()
	if err != nil {
		return nil, err
	}
	return scanJoinedHits(rows)
}

func hitKind(kind string) recall.Kind {
	if kind == RecallBelief {
		return recall.Belief
	}
	return recall.Perception
}
