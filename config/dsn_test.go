package config

import (
	"errors"
	"testing"
)

// A PostgreSQL server on the same machine is often reached over its Unix
// socket; those DSNs load, and DSNs that name no server still do not.
func TestDatabaseDSNForms(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dsn string
		ok  bool
	}{
		{"sqlite://troupe.db", true},
		{"postgres://troupe:pw@db:5432/troupe?sslmode=disable", true},
		{"postgres://troupe@/troupe?host=/var/run/postgresql", true},
		{"postgresql://troupe@/troupe?host=/tmp&port=5433&sslmode=disable", true},
		{"postgres:///troupe", true},
		{"postgres://", false},
		{"postgres:///", false},
		{"postgres://troupe@/?sslmode=disable", false},
		{"sqlite://", false},
		{"mysql://troupe@db/troupe", false},
	} {
		t.Run(tt.dsn, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, ""), envMap(map[string]string{"TROUPE_DATABASE_DSN": tt.dsn}))
			var cerr *Error
			switch {
			case tt.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !tt.ok && (!errors.As(err, &cerr) || cerr.Key != "database.dsn"):
				t.Fatalf("err = %v, want a database.dsn error", err)
			}
		})
	}
}
