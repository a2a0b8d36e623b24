package testenv

import (
	"context"
	"path/filepath"
	"testing"

	"troupe/models"
)

// Backend is a database a test runs against.
type Backend struct {
	Name string
	DSN  string
}

// Backends returns a fresh SQLite file, and a fresh PostgreSQL database when
// the test services are there (see Available).
func Backends(t testing.TB) []Backend {
	t.Helper()
	out := []Backend{{Name: "sqlite", DSN: "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")}}
	if Available() {
		out = append(out, Backend{Name: "postgres", DSN: FreshPostgresDB(t)})
	}
	return out
}

// OpenStore opens and migrates a store on b, closed at the end of the test.
func OpenStore(t testing.TB, b Backend) *models.Store {
	t.Helper()
	st, err := models.Open(context.Background(), b.DSN, nil)
	if err != nil {
		t.Fatalf("open %s store: %v", b.Name, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
