package models

import (
	"strings"

	"gorm.io/gorm"
)

// On PostgreSQL a list of ids goes as one text[] parameter (= ANY) rather
// than an IN list of one parameter each: the statement's text then does
// not change with the number of ids, so it is prepared once per connection
// and its plan can be kept. With IN lists a turn's recall reads came in
// 6–20 texts each and were planned at every call; planning took more time
// than running them (troupe bench, pg_stat_statements).

// oneOf returns query with each "IN ?" written for the store's database.
// Its argument must come from ids.
func (s *Store) oneOf(query string) string { return inListFor(s.dialect, query) }

// ids is the argument of a list oneOf rewrote.
func (s *Store) ids(list []string) any { return listArgFor(s.dialect, list) }

// inList is oneOf for code that has a transaction rather than the store;
// listArg is its ids.
func inList(tx *gorm.DB, query string) string { return inListFor(tx.Dialector.Name(), query) }

func listArg(tx *gorm.DB, list []string) any { return listArgFor(tx.Dialector.Name(), list) }

func inListFor(dialect, query string) string {
	if dialect != "postgres" {
		return query
	}
	return strings.ReplaceAll(query, " IN ?", " = ANY(CAST(? AS text[]))")
}

func listArgFor(dialect string, list []string) any {
	if dialect != "postgres" {
		return list
	}
	return textArray(list)
}
