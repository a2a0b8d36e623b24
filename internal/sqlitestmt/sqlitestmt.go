// Package sqlitestmt opens SQLite connections that keep their prepared
// statements. The driver (modernc.org/sqlite) prepares a statement again at
// every Exec or Query on a connection, and parsing and planning troupe's
// turn statements was a fifth of a SQLite turn's CPU; a statement prepared
// once per connection is only bound and stepped after that.
package sqlitestmt

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"

	"modernc.org/sqlite"
)

// Connector returns a connector for dsn (modernc.org/sqlite's DSN) whose
// connections each keep up to size prepared statements, the least recently
// used going first.
func Connector(dsn string, size int) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return &connector{Connector: c, size: size}, nil
}

type connector struct {
	driver.Connector
	size int
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	full, ok := dc.(driverConn)
	if !ok {
		dc.Close()
		return nil, errors.New("sqlitestmt: the driver's connection lacks a method database/sql needs")
	}
	return &conn{c: full, size: c.size, byText: map[string]*list.Element{}, order: list.New()}, nil
}

// The interfaces of the driver's connection that database/sql uses.
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// conn is one connection and its statements. database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type conn struct {
	c      driverConn
	size   int
	byText map[string]*list.Element
	order  *list.List // of *cached, the most recently used first
	// prepares counts the statements prepared, kept or not.
	prepares int
}

type cached struct {
	text string
	st   driver.Stmt
	// busy: rows of the statement are open; another use of the same text
	// meanwhile prepares a statement of its own.
	busy bool
	// evicted: dropped from the cache while busy; closed with its rows.
	evicted bool
}

// stmt returns the kept statement for text, preparing it when it is new.
// A nil *cached means st is the caller's to close.
func (c *conn) stmt(ctx context.Context, text string) (driver.Stmt, *cached, error) {
	if e, ok := c.byText[text]; ok {
		k := e.Value.(*cached)
		if !k.busy {
			c.order.MoveToFront(e)
			return k.st, k, nil
		}
		st, err := c.prepare(ctx, text)
		return st, nil, err
	}
	st, err := c.prepare(ctx, text)
	if err != nil || c.size <= 0 {
		return st, nil, err
	}
	k := &cached{text: text, st: st}
	c.byText[text] = c.order.PushFront(k)
	for c.order.Len() > c.size {
		old := c.order.Back()
		c.order.Remove(old)
		o := old.Value.(*cached)
		delete(c.byText, o.text)
		if o.busy {
			o.evicted = true
		} else {
			o.st.Close()
		}
	}
	return st, k, nil
}

func (c *conn) prepare(ctx context.Context, text string) (driver.Stmt, error) {
	c.prepares++
	return c.c.PrepareContext(ctx, text)
}

func (c *conn) ExecContext(ctx context.Context, text string, args []driver.NamedValue) (driver.Result, error) {
	st, k, err := c.stmt(ctx, text)
	if err != nil {
		return nil, err
	}
	if k == nil {
		defer st.Close()
	}
	return st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *conn) QueryContext(ctx context.Context, text string, args []driver.NamedValue) (driver.Rows, error) {
	st, k, err := c.stmt(ctx, text)
	if err != nil {
		return nil, err
	}
	r, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if k == nil {
			st.Close()
		}
		return nil, err
	}
	if k != nil {
		k.busy = true
	}
	return &rows{Rows: r, st: st, k: k}, nil
}

func (c *conn) Prepare(text string) (driver.Stmt, error) {
	return c.prepare(context.Background(), text)
}

func (c *conn) PrepareContext(ctx context.Context, text string) (driver.Stmt, error) {
	return c.prepare(ctx, text)
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}

func (c *conn) Ping(ctx context.Context) error { return c.c.Ping(ctx) }

func (c *conn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }

func (c *conn) IsValid() bool { return c.c.IsValid() }

// Close closes the connection's statements, then the connection.
func (c *conn) Close() error {
	var errs []error
	for e := c.order.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*cached).st.Close())
	}
	c.order.Init()
	clear(c.byText)
	errs = append(errs, c.c.Close())
	return errors.Join(errs...)
}

// rows gives its statement back when closed.
type rows struct {
	driver.Rows
	st driver.Stmt
	k  *cached
}

func (r *rows) Close() error {
	err := r.Rows.Close()
	switch {
	case r.k == nil:
		err = errors.Join(err, r.st.Close())
	case r.k.evicted:
		err = errors.Join(err, r.st.Close())
	default:
		r.k.busy = false
	}
	return err
}

func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *rows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
