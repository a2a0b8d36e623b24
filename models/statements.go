package models

import (
	"context"
	"sync/atomic"

	"gorm.io/gorm"
)

// Statements counts what the store sent the database, split between the
// turns and the memory jobs (contexts marked Background): statements as
// GORM ran them, and transactions. On PostgreSQL each statement is one
// round trip, and a transaction adds two (BEGIN, COMMIT; a job's three,
// with its SET LOCAL). troupe bench reports them per turn.
type Statements struct {
	Turn, Background     int64
	TurnTx, BackgroundTx int64
}

// RoundTrips is how many round trips the counts make on PostgreSQL.
func (s Statements) RoundTrips() (turn, background int64) {
	return s.Turn + 2*s.TurnTx, s.Background + 3*s.BackgroundTx
}

// Sub is s minus an earlier count.
func (s Statements) Sub(o Statements) Statements {
	return Statements{Turn: s.Turn - o.Turn, Background: s.Background - o.Background,
		TurnTx: s.TurnTx - o.TurnTx, BackgroundTx: s.BackgroundTx - o.BackgroundTx}
}

type statementCounter struct {
	turn, background, turnTx, backgroundTx atomic.Int64
}

func (c *statementCounter) statement(ctx context.Context) {
	if ctx != nil && isBackground(ctx) {
		c.background.Add(1)
	} else {
		c.turn.Add(1)
	}
}

func (c *statementCounter) tx(ctx context.Context) {
	if ctx != nil && isBackground(ctx) {
		c.backgroundTx.Add(1)
	} else {
		c.turnTx.Add(1)
	}
}

// Statements returns the counts since the store opened.
func (s *Store) Statements() Statements {
	c := s.counts
	return Statements{Turn: c.turn.Load(), Background: c.background.Load(), TurnTx: c.turnTx.Load(), BackgroundTx: c.backgroundTx.Load()}
}

// registerStatementCounts counts every statement GORM runs, after it ran.
func registerStatementCounts(db *gorm.DB, c *statementCounter) error {
	count := func(db *gorm.DB) { c.statement(db.Statement.Context) }
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("troupe:count", count),
		cb.Query().After("gorm:query").Register("troupe:count", count),
		cb.Update().After("gorm:update").Register("troupe:count", count),
		cb.Delete().After("gorm:delete").Register("troupe:count", count),
		cb.Row().After("gorm:row").Register("troupe:count", count),
		cb.Raw().After("gorm:raw").Register("troupe:count", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
