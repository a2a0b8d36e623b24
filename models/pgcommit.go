package models

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// jobCommitPool is PostgreSQL's pool as GORM sees it: a memory job's
// transaction (Background) commits without waiting for its WAL to reach
// the disk (synchronous_commit off for that transaction alone). A turn's
// commit waits for the disk as before, but no longer behind as many of
// the jobs' flushes: with every commit synchronous, troupe bench's
// pipeline p99 over 200 turns was 30–50 ms on PostgreSQL; with the jobs'
// commits not waiting, 14–19 ms in most runs. A crash can lose a job's
// last commits (whole, never a turn's: PostgreSQL replays the WAL in
// order), and what a job writes is derived from what the turns stored:
// the work is owed again and the sweeper finds it. No job carries out a
// /forget (the command deletes in its own transaction), so none is undone.
type jobCommitPool struct {
	*sql.DB
	counts *statementCounter
}

var (
	_ gorm.ConnPool         = jobCommitPool{}
	_ gorm.ConnPoolBeginner = jobCommitPool{}
	_ gorm.GetDBConnector   = jobCommitPool{}
)

func (p jobCommitPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

func (p jobCommitPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	p.counts.tx(ctx)
	if isBackground(ctx) {
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit TO OFF"); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}
