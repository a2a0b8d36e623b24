package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// PrivatePostgres is a PostgreSQL server of one test's own, which the test
// may stop and start (the shared one from scripts/test must stay up).
type PrivatePostgres struct {
	bin, dir, sock string
	port           int
	asUser         bool
}

// StartPrivatePostgres initializes and starts a PostgreSQL server in a
// temporary directory (as the postgres user when running as root). It is
// stopped at the end of the test.
func StartPrivatePostgres(t testing.TB) *PrivatePostgres {
	t.Helper()
	bin := os.Getenv("TROUPE_PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	dir, err := os.MkdirTemp("", "troupe-privpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &PrivatePostgres{bin: bin, dir: dir, sock: dir, asUser: os.Geteuid() == 0}
	if p.asUser {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("private postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if out, err := p.run("initdb", "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.Start(t)
	t.Cleanup(func() { _, _ = p.run("pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop") })
	if out, err := exec.Command("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(p.port), "-U", "postgres", "-c", "CREATE DATABASE troupe").CombinedOutput(); err != nil {
		t.Fatalf("create database: %v\n%s", err, out)
	}
	return p
}

func (p *PrivatePostgres) run(tool string, args ...string) ([]byte, error) {
	path := filepath.Join(p.bin, tool)
	var cmd *exec.Cmd
	if p.asUser {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	return cmd.CombinedOutput()
}

// URL is the server's database URL.
func (p *PrivatePostgres) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/troupe?sslmode=disable&connect_timeout=3", p.port)
}

// Start starts the server and waits until it accepts connections.
func (p *PrivatePostgres) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", p.port, p.sock)
	if out, err := p.run("pg_ctl", "-D", filepath.Join(p.dir, "data"), "-w", "-t", "30", "-l", filepath.Join(p.dir, "log"), "-o", opts, "start"); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("private postgres did not start")
}

// Stop stops the server at once, dropping its connections.
func (p *PrivatePostgres) Stop(t testing.TB) {
	t.Helper()
	if out, err := p.run("pg_ctl", "-D", filepath.Join(p.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}
