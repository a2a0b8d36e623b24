// Package testenv gives tests access to the throwaway PostgreSQL and Redis
// servers that scripts/test starts.
//
// scripts/test exports:
//
//	TROUPE_TEST_POSTGRES_URL  postgres://postgres@127.0.0.1:PORT/troupe_test?sslmode=disable
//	TROUPE_TEST_REDIS_URL     redis://127.0.0.1:PORT/0
//	TROUPE_TEST_SERVICES=1    the services are meant to be up
//
// Tests ask Available before they add the real-service cases, so a plain
// `go test` on a developer machine runs the SQLite and embedded-Redis cases
// only. Asking for a URL that is not set fails the test: when
// TROUPE_TEST_SERVICES is true, a broken CI setup cannot pass quietly.
//
// Isolation: FreshPostgresDB creates a database for each test and drops it
// when the test ends, so tests may call t.Parallel. Redis databases are few and
// shared by all test binaries that run at the same time, so there is no
// per-test Redis database. Instead, tests put RedisPrefix(t) in front of their
// keys.
package testenv

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

const (
	// PostgresURLEnv holds the URL of the test PostgreSQL database.
	PostgresURLEnv = "TROUPE_TEST_POSTGRES_URL"
	// RedisURLEnv holds the URL of the test Redis server.
	RedisURLEnv = "TROUPE_TEST_REDIS_URL"
	// ServicesEnv, set to a true value, turns a missing service into a
	// test failure instead of a skip.
	ServicesEnv = "TROUPE_TEST_SERVICES"
)

// servicesRequired reports whether TROUPE_TEST_SERVICES says the services
// should be present.
func servicesRequired() bool {
	v, err := strconv.ParseBool(strings.TrimSpace(os.Getenv(ServicesEnv)))
	return err == nil && v
}

func lookup(t testing.TB, env, what string) string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v
	}
	if servicesRequired() {
		t.Fatalf("%s=1 but %s is not set; %s is required", ServicesEnv, env, what)
	}
	// Callers check Available first; reaching here is a test bug.
	t.Fatalf("%s not started (%s is empty); run scripts/test", what, env)
	return ""
}

// PostgresURL returns $TROUPE_TEST_POSTGRES_URL; the test fails if it is
// not set.
//
// Every test that uses this URL shares one database. Use FreshPostgresDB to
// get a database of your own.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return lookup(t, PostgresURLEnv, "PostgreSQL")
}

// RedisURL returns $TROUPE_TEST_REDIS_URL; the test fails if it is not set.
//
// The server is shared by all tests, so use RedisPrefix for key names.
func RedisURL(t testing.TB) string {
	t.Helper()
	return lookup(t, RedisURLEnv, "Redis")
}

// RedisPrefix returns a new key prefix, such as "troupetest:3f9c2a1b7d4e8f60:",
// which no other test uses. It does not need Redis and deletes no keys: the
// whole Redis server is thrown away after the run.
func RedisPrefix(t testing.TB) string {
	t.Helper()
	return "troupetest:" + randomHex() + ":"
}

// FreshPostgresDB creates an empty database named t_<random> on the server
// from PostgresURL and returns its URL. At the end of the test, the database
// is dropped WITH (FORCE), which closes any connections still open to it.
// Register cleanups that close your own connections after calling this. They
// then run first.
func FreshPostgresDB(t testing.TB) string {
	t.Helper()
	base := PostgresURL(t)

	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("testenv: %s must be a postgres:// URL, got %q", PostgresURLEnv, base)
	}
	name := "t_" + randomHex()

	if err := adminExec(base, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := adminExec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database %s: %v", name, err)
		}
	})

	fresh := *u
	fresh.Path = "/" + name
	fresh.RawPath = ""
	return fresh.String()
}

// adminExec runs one statement on its own short-lived connection. CREATE and
// DROP DATABASE cannot run inside a transaction, and the connection must not
// be to the database that is being dropped.
func adminExec(dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	// This runs in t.Cleanup too, after the test's context is cancelled, so
	// it has its own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// randomHex returns 16 random lowercase hex digits. The result is safe to
// use in SQL identifiers and key names.
func randomHex() string {
	var b [8]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

// Available reports whether the test PostgreSQL and Redis are there to use:
// true when scripts/test started them (TROUPE_TEST_SERVICES=1, and then a
// missing URL fails the test that asks for it) or when both URLs are set.
// Tests that run on several backends use it to add the real-service cases.
func Available() bool {
	if servicesRequired() {
		return true
	}
	return os.Getenv(PostgresURLEnv) != "" && os.Getenv(RedisURLEnv) != ""
}

// Require skips the test, with the reason, when the real PostgreSQL and
// Redis are not there to use; when TROUPE_TEST_SERVICES=1 says they are,
// Available is true and a missing URL fails the test that asks for it. A
// test that needs the real services calls Require first, so it can never
// pass without having run.
func Require(t testing.TB) {
	t.Helper()
	if !Available() {
		t.Skipf("needs the PostgreSQL and Redis that scripts/test starts (%s=1)", ServicesEnv)
	}
}

// FreshRedisURL returns the URL of a Redis database (a numbered one on the
// test server, started with --databases 1024) that no other test in this run
// uses, emptied first. Queues keep their keys under fixed names, so tests
// that run job workers need a database of their own.
func FreshRedisURL(t testing.TB) string {
	t.Helper()
	base := RedisURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", RedisURLEnv, err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("redis: %v", err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	cmd := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatalf("redis: %v", err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		return strings.TrimSpace(line)
	}
	reply := cmd("INCR", "troupe:testenv:next-db")
	n, err := strconv.Atoi(strings.TrimPrefix(reply, ":"))
	if err != nil {
		t.Fatalf("redis INCR: %q", reply)
	}
	db := n%1023 + 1
	if reply := cmd("SELECT", strconv.Itoa(db)); reply != "+OK" {
		t.Fatalf("redis SELECT %d: %q (is the server started with --databases 1024?)", db, reply)
	}
	cmd("FLUSHDB")
	u.Path = "/" + strconv.Itoa(db)
	return u.String()
}
