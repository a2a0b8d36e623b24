package models

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// jobCommitPool is PostgreSQL's pool as GORM sees it: a memory job's
// transaction (Background) commits without waiting for its WAL to reach
// the disk (synchronous_commit off for that transaction alone). A turn's
// commit waits for the disk as before, but no longer queues behind the
// jobs' flushes: with every commit synchronous, troupe bench's pipeline
// p99 over 200 turns was 30–50 ms on PostgreSQL, nearly all of it turns
// whose commit met a job's. A crash can lose a job's last commits (never
// part of one, never a turn's, and PostgreSQL replays the WAL in order),
// and what a job writes is derived from what the turns stored: the work
// is owed again and the sweeper finds it.
type jobCommitPool struct{ *sql.DB }

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
	if isBackground(ctx) {
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit TO OFF"); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}
