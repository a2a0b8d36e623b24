// Package sqlite takes the place of github.com/glebarez/go-sqlite (see the
// replace in troupe's go.mod). The GORM dialector troupe uses,
// github.com/glebarez/sqlite, imports that driver, a fork of
// modernc.org/sqlite from 2023 that parses and plans every statement at
// each execution. troupe opens its SQLite connections with
// modernc.org/sqlite itself (internal/sqlitestmt), which can keep a
// prepared statement; both drivers register the name "sqlite", so only
// one of them may be linked. The dialector needs nothing of its driver
// but the error type.
package sqlite

import msqlite "modernc.org/sqlite"

// Error is the driver's error, which the dialector translates.
type Error = msqlite.Error
