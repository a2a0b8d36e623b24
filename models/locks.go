package models

import (
	"errors"
	"hash/fnv"
	"sort"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Memory writes and forgetting take the same locks, inside their
// transactions, so that no write derived from a chat can land during or
// after that chat's forget:
//
//   - the chat's lock, by every write of something derived from one chat
//     (a summary, a recap) and by ForgetChat;
//   - the (card, space) lock, by every write of a card's memory in a space
//     (a recap's manifest entry, a consolidation, a hand edit, a recap
//     deleted by hand) and by ForgetChat, for the card and space of the
//     chat it forgets.
//
// A transaction takes its chat's lock before any (card, space) lock, and
// (card, space) locks in the order of MemoryKey, so two of them never wait
// for each other in a circle.
//
// On PostgreSQL the chat's lock is a transaction-scoped advisory lock
// taken before its row is read FOR KEY SHARE. The row lock is what keeps
// ForgetChat out: it locks the row FOR UPDATE (and deletes it), so a write
// waiting for it then finds no chat. FOR KEY SHARE does not stop a turn
// from moving the chat's head (an update of no key column); the row FOR
// UPDATE did, and a turn's store waited 20–45 ms behind whichever memory
// job held it (troupe bench, PostgreSQL). The advisory lock keeps the
// memory writes of one chat from running at once, as the row lock did.
// (card, space) locks are transaction-scoped advisory locks as well. On
// SQLite the store's transactions begin IMMEDIATE, which takes the
// database's write lock before the first read, on one connection: every
// write transaction already runs alone, in this process and against any
// other process on the same file.

// lockChat reads the chat and holds its lock until the transaction ends. It
// returns ErrChatGone when there is no such chat.
func (s *Store) lockChat(tx *gorm.DB, chatID string) (Chat, error) {
	return s.takeChat(tx, chatID, "KEY SHARE")
}

// holdChat reads the chat and, on PostgreSQL, keeps ForgetChat from
// deleting it until the transaction ends, without waiting for the chat's
// memory jobs: a turn's own writes that ForgetChat deletes use it.
func (s *Store) holdChat(tx *gorm.DB, chatID string) (Chat, error) {
	return s.readChat(tx, chatID, "KEY SHARE")
}

// lockChatForForget takes the chat's lock and its row FOR UPDATE, which
// waits for every transaction holding the chat and keeps out any that
// comes later.
func (s *Store) lockChatForForget(tx *gorm.DB, chatID string) (Chat, error) {
	return s.takeChat(tx, chatID, "UPDATE")
}

// takeChat takes the chat's advisory lock, then reads its row with the
// given lock strength (on PostgreSQL).
func (s *Store) takeChat(tx *gorm.DB, chatID, strength string) (Chat, error) {
	if s.dialect == "postgres" {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", lockID("troupe chat\x00"+chatID)).Error; err != nil {
			return Chat{}, err
		}
	}
	return s.readChat(tx, chatID, strength)
}

func (s *Store) readChat(tx *gorm.DB, chatID, strength string) (Chat, error) {
	var chat Chat
	q := tx.Where("id = ?", chatID)
	if s.dialect == "postgres" {
		q = q.Clauses(clause.Locking{Strength: strength})
	}
	err := q.Take(&chat).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return chat, ErrChatGone
	}
	return chat, err
}

// spaceBeliefs is the lock of a space's beliefs: every reflection install
// of the space takes it, and so does every deletion of perceptions there
// (forgetting a chat, deleting one perception), so the two never overlap.
// An install that rewrites a belief has read only its links to the
// perceptions the round showed; without this lock it had to hold every
// other perception the belief cites (FOR KEY SHARE, hundreds of rows and
// 7 ms a round in troupe bench) to keep a forget from reading the belief
// before the rewrite. Installs of a space already run one at a time (the
// space's reflection lock), so it adds no wait among them. Its card id is
// one no card has.
func spaceBeliefs(spaceID string) MemoryKey {
	return MemoryKey{CardID: "\x00beliefs", SpaceID: spaceID}
}

// lockMemory holds the locks of the (card, space) pairs until the
// transaction ends, taken in a fixed order.
func (s *Store) lockMemory(tx *gorm.DB, keys ...MemoryKey) error {
	if s.dialect != "postgres" {
		return nil
	}
	sorted := append([]MemoryKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].CardID != sorted[j].CardID {
			return sorted[i].CardID < sorted[j].CardID
		}
		return sorted[i].SpaceID < sorted[j].SpaceID
	})
	for i, k := range sorted {
		if i > 0 && k == sorted[i-1] {
			continue
		}
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", lockID("troupe memory\x00"+k.CardID+"\x00"+k.SpaceID)).Error; err != nil {
			return err
		}
	}
	return nil
}

// lockID is the advisory lock id of a key. Two keys sharing an id (one
// chance in 2^64) only wait for each other more often.
func lockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64())
}
