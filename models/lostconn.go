package models

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"gorm.io/gorm"
)

// registerLostConnReset makes a statement that finds its PostgreSQL
// connection gone (the server restarted, or dropped it) close every idle
// connection of sqlDB, which keeps idle of them. The other idle ones are
// most likely gone too, and pgx pings a pooled connection before reuse only
// once it has been idle a second: each would have failed one more message
// after the server came back.
func registerLostConnReset(db *gorm.DB, sqlDB *sql.DB, idle int) error {
	f := func(tx *gorm.DB) {
		if tx.Error != nil && lostConn(tx.Error) {
			sqlDB.SetMaxIdleConns(0)
			sqlDB.SetMaxIdleConns(idle)
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("troupe:lost_conn", f),
		cb.Query().After("gorm:query").Register("troupe:lost_conn", f),
		cb.Update().After("gorm:update").Register("troupe:lost_conn", f),
		cb.Delete().After("gorm:delete").Register("troupe:lost_conn", f),
		cb.Row().After("gorm:row").Register("troupe:lost_conn", f),
		cb.Raw().After("gorm:raw").Register("troupe:lost_conn", f),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// lostConn reports whether err says the connection itself is gone, not
// that a statement failed on a live one.
func lostConn(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
