//go:build linux

package models_test

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"troupe/models"
)

// SQLite keeps its locks between processes as POSIX locks on the -shm
// file, which the kernel drops when the process closes any descriptor of
// that file. The checkpointer reads the file's header on every tick: the
// store's own lock (a shared lock on byte 128, which tells another process
// opening the database that it is not the first) must survive it. The
// locks are read from Linux's /proc/locks, so the file is built on Linux
// only (CI and the Docker image run there).
func TestSQLiteCheckpointerKeepsSQLiteLocks(t *testing.T) {
	st, path := sqliteStore(t)
	chat := newChat(t, st, "console:locks")
	appendBeat(t, st, chat.ID, 1)
	fi, err := os.Stat(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if !holdsLock(string(locks), ino, 128) {
		t.Fatalf("SQLite holds no lock on byte 128 of the -shm file to begin with:\n%s", locks)
	}
	for range 3 {
		if _, _, ok := models.WALFrames(st); !ok {
			t.Fatal("the WAL-index file could not be read")
		}
	}
	appendBeat(t, st, chat.ID, 2)
	if locks, err = os.ReadFile("/proc/locks"); err != nil {
		t.Fatal(err)
	}
	if !holdsLock(string(locks), ino, 128) {
		t.Fatalf("reading the WAL index dropped SQLite's lock on byte 128 of the -shm file:\n%s", locks)
	}
}

// holdsLock reports whether /proc/locks shows a POSIX lock of this process
// on inode ino that covers byte off. A line reads
// "1: POSIX  ADVISORY  READ 1234 fd:01:5678 128 128".
func holdsLock(locks string, ino uint64, off int64) bool {
	pid := strconv.Itoa(os.Getpid())
	for line := range strings.Lines(locks) {
		f := strings.Fields(line)
		if len(f) < 8 || f[1] != "POSIX" || f[4] != pid {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 || id[2] != strconv.FormatUint(ino, 10) {
			continue
		}
		start, err1 := strconv.ParseInt(f[6], 10, 64)
		end := int64(math.MaxInt64)
		if f[7] != "EOF" {
			var err2 error
			if end, err2 = strconv.ParseInt(f[7], 10, 64); err2 != nil {
				continue
			}
		}
		if err1 == nil && start <= off && off <= end {
			return true
		}
	}
	return false
}
