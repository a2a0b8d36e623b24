package models

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// SeedSpec describes a synthetic record for benchmarks (troupe bench
// --seed-perceptions, the recall benchmarks): N perceptions of Character
// in a chat of its own in SpaceID, each of a sealed event of its own,
// indexed as the recorder's would be.
type SeedSpec struct {
	SpaceID, Character, ChatID string
	N                          int `json:"n"`
	// Seed makes the texts repeatable.
	Seed uint64 `json:"seed"`
}

// seedWords is the vocabulary synthetic perceptions are written in: enough
// words that most are rare, as in a story.
func seedWords(r *rand.Rand) []string {
	syll := []string{"ka", "lo", "mi", "ren", "sta", "vo", "thu", "bel", "dar", "ish", "qua", "po", "ne", "gri", "wen"}
	words := make([]string, 3000)
	for i := range words {
		n := 2 + r.IntN(2)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		words[i] = b.String()
	}
	return words
}

// seedRows is how many rows one statement of SeedRecord inserts.
const seedRows = 100

// SeedRecord writes spec's synthetic record in batches, outside any turn.
func (s *Store) SeedRecord(ctx context.Context, spec SeedSpec) error {
	r := rand.New(rand.NewPCG(spec.Seed, 7))
	words := seedWords(r)
	common := []string{"lamp", "sea", "door", "night", "ship", "rope"}
	now := s.now()
	db := s.db.WithContext(ctx)
	const batch = 2000
	for start := 0; start < spec.N; start += batch {
		n := min(batch, spec.N-start)
		evs := make([]Event, 0, n)
		ps := make([]Perception, 0, n)
		var items []recallItem
		for i := range n {
			seq := int64(start + i + 1)
			var b strings.Builder
			for w := range 12 {
				if w > 0 {
					b.WriteByte(' ')
				}
				if w%4 == 0 {
					b.WriteString(common[r.IntN(len(common))])
				} else {
					b.WriteString(words[r.IntN(len(words))])
				}
			}
			text := b.String() + "."
			e := Event{ID: NewID(), ChatID: spec.ChatID, SpaceID: spec.SpaceID, MessageID: NewID(), Seq: seq, Kind: "action",
				Actor: "Ada", Text: text, Importance: 1 + r.IntN(9), Day: int(seq / 20), Minute: int(seq%20) * 30, Sealed: true, CreatedAt: now}
			p := Perception{ID: NewID(), ChatID: spec.ChatID, SpaceID: spec.SpaceID, Character: spec.Character, EventID: e.ID, Mode: "saw",
				Text: text, Importance: e.Importance, Seq: seq, Day: e.Day, Minute: e.Minute, CreatedAt: now}
			evs, ps = append(evs, e), append(ps, p)
			items = append(items, recallItem{id: p.ID, kind: RecallPerception, chat: p.ChatID, char: p.Character, seq: seq, text: text, names: []string{"Ada"}})
		}
		terms, err := recallTerms(db, spec.SpaceID, items)
		if err != nil {
			return fmt.Errorf("models: seed record: %w", err)
		}
		// Small statements: the SQLite driver binds each parameter by
		// looking through all of them, so a statement's binding grows with
		// the square of its rows.
		if err := db.CreateInBatches(evs, seedRows).Error; err != nil {
			return fmt.Errorf("models: seed record: %w", err)
		}
		if err := db.CreateInBatches(ps, seedRows).Error; err != nil {
			return fmt.Errorf("models: seed record: %w", err)
		}
		if err := db.CreateInBatches(terms, seedRows).Error; err != nil {
			return fmt.Errorf("models: seed record: %w", err)
		}
	}
	// A bulk load leaves PostgreSQL's planner statistics behind (its
	// autovacuum would catch up later): bring the seeded tables' up to date
	// now, and only theirs. Analyzed while still empty, the tables the run
	// itself fills (messages above all) were planned as empty until
	// autovacuum's next round, a minute on: a whole troupe bench run, every
	// turn's branch walk scanning all messages (4.4 ms a turn, against 0.5).
	// SQLite is left as a live store is, which never runs ANALYZE: its
	// statistics (STAT4) would make every statement be prepared twice, once
	// more after its values are bound.
	if s.dialect != "postgres" {
		return nil
	}
	if err := db.Exec("ANALYZE events, perceptions, recall_terms").Error; err != nil {
		return fmt.Errorf("models: seed record: analyze: %w", err)
	}
	return nil
}

// SettleLoad leaves a store that SeedRecord has just filled as a live store
// of the same size would be, one that grew over months: nothing of the bulk
// load still waiting to be written out. troupe bench calls it between the
// seed and the turns it measures. Traced on PostgreSQL, the seed's
// aftermath otherwise held single commits of those turns for 65–140 ms
// while nothing else of troupe ran: the checkpoint writing back the seeded
// pages, and the vacuum that inserts trigger working through the seeded
// tables. So on PostgreSQL it vacuums them and checkpoints (CHECKPOINT
// needs a superuser or the pg_checkpoint role; without it that step is
// skipped with a warning); on SQLite it copies the WAL into the database
// file and truncates it.
func (s *Store) SettleLoad(ctx context.Context) error {
	if s.dialect != "postgres" {
		if err := s.truncateWAL(ctx); err != nil {
			return fmt.Errorf("models: settle load: %w", err)
		}
		return nil
	}
	db := s.db.WithContext(ctx)
	if err := db.Exec(`VACUUM events, perceptions, recall_terms`).Error; err != nil {
		return fmt.Errorf("models: settle load: vacuum: %w", err)
	}
	if err := db.Exec(`CHECKPOINT`).Error; err != nil {
		if !strings.Contains(err.Error(), "42501") {
			return fmt.Errorf("models: settle load: checkpoint: %w", err)
		}
		s.log.Warn("settle load: no right to CHECKPOINT; the seeded pages are written back during the run", "err", err)
	}
	return nil
}
