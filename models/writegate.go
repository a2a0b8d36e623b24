package models

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

type backgroundKey struct{}

// Background marks ctx as a memory job's: on SQLite its writes give way to
// every other write waiting for the one writing connection (see
// writeGate). The job worker marks each job's context.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func isBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// writeGate hands SQLite's one writing connection to a turn before any
// memory job. database/sql gives a freed connection to a waiter picked at
// random, so a turn's store waited behind every job transaction queued
// with it (the recorder writes its index terms in several), and troupe
// bench's pipeline p99 counted those waits. Through the gate a turn waits
// for at most the transaction already running. A write transaction holds
// the gate from its BEGIN to its COMMIT or ROLLBACK; a statement outside
// one, for its call.
type writeGate struct {
	mu     sync.Mutex
	free   *sync.Cond
	busy   bool
	urgent int // turns (and any other write not marked Background) waiting
	// waits counts the writes that found the writer taken.
	waits atomic.Int64
	// maxDefer is how long a background write gives way (maxDefer).
	maxDefer time.Duration
}

func newWriteGate() *writeGate {
	g := &writeGate{maxDefer: maxDefer}
	g.free = sync.NewCond(&g.mu)
	return g
}

// maxDefer is how long a memory job's write gives way to turns' at most:
// under a steady stream of turns the jobs (compaction among them) still
// get their turn.
const maxDefer = 100 * time.Millisecond

func (g *writeGate) acquire(ctx context.Context) error {
	wake := func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.free.Broadcast()
	}
	stop := context.AfterFunc(ctx, wake)
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	background := isBackground(ctx)
	var deadline time.Time
	if background {
		deadline = time.Now().Add(g.maxDefer)
		defer time.AfterFunc(g.maxDefer, wake).Stop()
	} else {
		g.urgent++
	}
	wait := func() bool {
		return g.busy || background && g.urgent > 0 && time.Now().Before(deadline)
	}
	if wait() {
		g.waits.Add(1)
	}
	for ctx.Err() == nil && wait() {
		g.free.Wait()
	}
	if !background {
		g.urgent--
	}
	if err := ctx.Err(); err != nil {
		// A background write may have waited for this one alone.
		g.free.Broadcast()
		return err
	}
	g.busy = true
	return nil
}

func (g *writeGate) release() {
	g.mu.Lock()
	g.busy = false
	g.mu.Unlock()
	g.free.Broadcast()
}

// gatedPool is the SQLite writer's connection pool as GORM sees it: the
// one-connection *sql.DB behind a writeGate.
type gatedPool struct {
	db     *sql.DB
	gate   *writeGate
	counts *statementCounter
}

var (
	_ gorm.ConnPool         = (*gatedPool)(nil)
	_ gorm.ConnPoolBeginner = (*gatedPool)(nil)
	_ gorm.GetDBConnector   = (*gatedPool)(nil)
)

func (p *gatedPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

func (p *gatedPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := p.gate.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.gate.release()
	return p.db.PrepareContext(ctx, query)
}

func (p *gatedPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := p.gate.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.gate.release()
	return p.db.ExecContext(ctx, query, args...)
}

// QueryContext gives the gate back on return, while the rows may still
// hold the connection: the next writer then waits in database/sql's queue
// for those rows to close, as it would without the gate.
func (p *gatedPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := p.gate.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.gate.release()
	return p.db.QueryContext(ctx, query, args...)
}

func (p *gatedPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := p.gate.acquire(ctx); err != nil {
		// A *sql.Row carrying err cannot be built outside database/sql; a
		// cancelled context gives the same error from the pool.
		return p.db.QueryRowContext(ctx, query, args...)
	}
	defer p.gate.release()
	return p.db.QueryRowContext(ctx, query, args...)
}

func (p *gatedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if err := p.gate.acquire(ctx); err != nil {
		return nil, err
	}
	tx, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		p.gate.release()
		return nil, err
	}
	p.counts.tx(ctx)
	return &gatedTx{Tx: tx, pool: p}, nil
}

// gatedTx is a write transaction holding the gate until it ends.
type gatedTx struct {
	*sql.Tx
	pool *gatedPool
	once sync.Once
}

func (t *gatedTx) GetDBConn() (*sql.DB, error) { return t.pool.db, nil }

func (t *gatedTx) Commit() error {
	defer t.once.Do(t.pool.gate.release)
	return t.Tx.Commit()
}

func (t *gatedTx) Rollback() error {
	defer t.once.Do(t.pool.gate.release)
	return t.Tx.Rollback()
}
