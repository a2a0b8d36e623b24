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
func (s *Store) oneOf(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	return strings.ReplaceAll(query, " IN ?", " = ANY(CAST(? AS text[]))")
}

// ids is the argument of a list oneOf rewrote.
func (s *Store) ids(list []string) any {
	if s.dialect != "postgres" {
		return list
	}
	return textArray(list)
}

// inList is oneOf for code that has a transaction rather than the store:
// the dialect is tx's.
func inList(tx *gorm.DB, query string) string {
	if tx.Dialector.Name() != "postgres" {
		return query
	}
	return strings.ReplaceAll(query, " IN ?", " = ANY(CAST(? AS text[]))")
}

// listArg is the argument of a list inList rewrote.
func listArg(tx *gorm.DB, list []string) any {
	if tx.Dialector.Name() != "postgres" {
		return list
	}
	return textArray(list)
}
