package testenv_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"troupe/models/testenv"
)

func TestTestenvPostgres(t *testing.T) {
	t.Parallel()
	testenv.Require(t)
	base := testenv.PostgresURL(t)

	var name string
	t.Run("fresh", func(t *testing.T) {
		fresh := testenv.FreshPostgresDB(t)
		u, err := url.Parse(fresh)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		if !strings.HasPrefix(name, "t_") {
			t.Fatalf("fresh database name = %q, want t_<random>", name)
		}

		db := openPG(t, fresh)
		var one int
		var current string
		if err := db.QueryRow("SELECT 1, current_database()").Scan(&one, &current); err != nil {
			t.Fatalf("SELECT 1: %v", err)
		}
		if one != 1 || current != name {
			t.Fatalf("got (%d, %q), want (1, %q)", one, current, name)
		}
		if _, err := db.Exec("CREATE TABLE isolated (id int)"); err != nil {
			t.Fatal(err)
		}
		// The test ends with this connection still open: WITH (FORCE) must
		// still drop the database.
	})

	// The subtest's cleanup has run, so the database must be gone.
	var n int
	err := openPG(t, base).QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %q still exists after the test ended", name)
	}
}

func TestTestenvPostgresParallel(t *testing.T) {
	t.Parallel()
	testenv.Require(t)
	testenv.PostgresURL(t)
	seen := make(chan string, 8)
	t.Run("group", func(t *testing.T) {
		for i := range cap(seen) {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				fresh := testenv.FreshPostgresDB(t)
				if _, err := openPG(t, fresh).Exec("CREATE TABLE same_name (id int)"); err != nil {
					t.Fatalf("CREATE TABLE in %s: %v", fresh, err)
				}
				seen <- fresh
			})
		}
	})
	close(seen)
	urls := map[string]bool{}
	for u := range seen {
		if urls[u] {
			t.Fatalf("FreshPostgresDB returned %s twice", u)
		}
		urls[u] = true
	}
}

func TestTestenvRedis(t *testing.T) {
	t.Parallel()
	testenv.Require(t)
	raw := testenv.RedisURL(t)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "redis" || u.Host == "" {
		t.Fatalf("%s = %q, want redis://host:port/db", testenv.RedisURLEnv, raw)
	}

	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("dial Redis: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))

	r := bufio.NewReader(conn)
	cmd := func(args ...string) string {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatalf("write %v: %v", args[0], err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read %v reply: %v", args[0], err)
		}
		return strings.TrimRight(line, "\r\n")
	}

	if pw, ok := u.User.Password(); ok {
		if got := cmd("AUTH", pw); got != "+OK" {
			t.Fatalf("AUTH: %q", got)
		}
	}
	if got := cmd("PING"); got != "+PONG" {
		t.Fatalf("PING: got %q, want +PONG", got)
	}
}

func TestTestenvRedisPrefix(t *testing.T) {
	a, b := testenv.RedisPrefix(t), testenv.RedisPrefix(t)
	if a == b || !strings.HasSuffix(a, ":") {
		t.Fatalf("RedisPrefix gave %q and %q, want two different prefixes ending in ':'", a, b)
	}
}

func openPG(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	return db
}
