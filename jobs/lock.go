package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLockTTL is how long a lock outlives a holder that stopped renewing
// it: a process killed with SIGKILL blocks its channels and chats for at
// most this long. A live holder renews it every TTL/3.
const DefaultLockTTL = 5 * time.Second

// Locker hands out Redis locks, so that several processes never work on the
// same chat at once: its turns (in troupe serve) or its memory jobs (in
// troupe worker).
//
// A lock's value names its owner (Owner, one per Locker, so one per
// process) and the holding itself; only that holding renews or releases it.
// A lock is short and renewed: when its holder dies it expires within TTL,
// and the next process takes it over. A holder whose renewal fails (Redis
// unreachable for longer than the TTL, or the key taken over after a pause)
// has lost it and is told so in the log; what it writes after that is
// fenced by the store, whose writes are conditional on the chat's head or
// the row they replace (models.ErrStale), not by the lock.
type Locker struct {
	rdb redis.UniversalClient
	// TTL bounds how long a dead holder blocks others; a live holder
	// renews it every TTL/3.
	TTL time.Duration
	// Owner identifies this process in the locks it holds.
	Owner string
	// Poll is how often Lock asks Redis again for a lock held in another
	// process (lockPoll when 0). A lock released in this process wakes
	// this process's waiter at once.
	Poll  time.Duration
	log   *slog.Logger
	local localKeys
}

// NewLocker returns a locker on r with DefaultLockTTL and a fresh owner id.
func NewLocker(r *Redis) *Locker {
	return &Locker{rdb: r.Client, TTL: DefaultLockTTL, Owner: NewOwnerID(), log: slog.New(slog.DiscardHandler)}
}

// WithLogger returns l logging lost locks to log.
func (l *Locker) WithLogger(log *slog.Logger) *Locker {
	if log != nil {
		l.log = log.With("component", "jobs")
	}
	return l
}

// NewOwnerID returns an id for this process's locks: host, pid and random
// bits, so that two processes (or a restart with a reused pid) never share
// one.
func NewOwnerID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "host"
	}
	return fmt.Sprintf("%s-%d-%s", strings.ReplaceAll(host, "/", "_"), os.Getpid(), randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ErrLockBusy: the lock is held elsewhere and TryLock does not wait.
var ErrLockBusy = errors.New("jobs: lock held by another process")

var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
var refreshScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// lockPoll is how often Lock asks again, by default, for a lock held in
// another process.
const lockPoll = 15 * time.Millisecond

// Lock waits for the lock on key (until ctx is done) and returns its
// release. The callers of one process wait for key in line, and only the
// first asks Redis; a release in this process (by Lock's or TryLock's
// holder) lets it try again at once. Polling alone cost a hand-over in
// one process up to a poll (half of one on average), and every waiter
// asked Redis at each poll.
func (l *Locker) Lock(ctx context.Context, key string) (func(), error) {
	lk := l.local.join(key)
	select {
	case lk.turn <- struct{}{}:
	case <-ctx.Done():
		l.local.leave(key)
		return nil, ctx.Err()
	}
	done := func() {
		<-lk.turn
		l.local.leave(key)
	}
	poll := l.Poll
	if poll <= 0 {
		poll = lockPoll
	}
	for {
		// Taken before trying, so that a release between the try and
		// the wait is not missed.
		freed := l.local.freed(key)
		unlock, err := l.TryLock(ctx, key)
		if err == nil {
			return func() {
				unlock()
				done()
			}, nil
		}
		if !errors.Is(err, ErrLockBusy) {
			done()
			return nil, err
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			done()
			return nil, ctx.Err()
		case <-freed:
		case <-t.C:
		}
		t.Stop()
	}
}

// localKeys are the keys this process waits for or holds through Lock.
type localKeys struct {
	mu   sync.Mutex
	keys map[string]*localKey
}

type localKey struct {
	// turn holds the one Lock caller of this process that asks Redis.
	turn chan struct{}
	// wake is closed when a holding of the key in this process is
	// released; nil until a waiter asks for it.
	wake chan struct{}
	refs int
}

func (w *localKeys) join(key string) *localKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]*localKey{}
	}
	k := w.keys[key]
	if k == nil {
		k = &localKey{turn: make(chan struct{}, 1)}
		w.keys[key] = k
	}
	k.refs++
	return k
}

func (w *localKeys) leave(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.keys[key]; k != nil {
		if k.refs--; k.refs == 0 {
			delete(w.keys, key)
		}
	}
}

// freed returns the channel closed at key's next release in this
// process; key must have been joined.
func (w *localKeys) freed(key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.keys[key]
	if k.wake == nil {
		k.wake = make(chan struct{})
	}
	return k.wake
}

// released wakes the waiter for key, if this process has one.
func (w *localKeys) released(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.keys[key]; k != nil && k.wake != nil {
		close(k.wake)
		k.wake = nil
	}
}

// Holder returns the owner id of whoever holds the lock on key, "" when it
// is free.
func (l *Locker) Holder(ctx context.Context, key string) (string, error) {
	v, err := l.rdb.Get(ctx, redisLockKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("jobs: lock %s: %w", key, err)
	}
	owner, _, _ := strings.Cut(v, "/")
	return owner, nil
}

func redisLockKey(key string) string { return "troupe:lock:" + key }

// TryLock takes the lock on key if it is free, else returns ErrLockBusy.
func (l *Locker) TryLock(ctx context.Context, key string) (func(), error) {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	value := l.Owner + "/" + randomHex(12)
	k := redisLockKey(key)
	ok, err := l.rdb.SetNX(ctx, k, value, ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("jobs: lock %s: %w", key, err)
	}
	if !ok {
		return nil, ErrLockBusy
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.renew(k, value, ttl, stop)
	}()
	return func() {
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		unlockScript.Run(ctx, l.rdb, []string{k}, value)
		l.local.released(key)
	}, nil
}

// renew keeps the lock k held by value alive every ttl/3 until stop is
// closed. It gives up when the key no longer holds value (it expired and
// another process took it) or when no renewal succeeded for a whole ttl
// (then it has expired).
func (l *Locker) renew(k, value string, ttl time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		n, err := refreshScript.Run(ctx, l.rdb, []string{k}, value, ttl.Milliseconds()).Int()
		cancel()
		switch {
		case err == nil && n == 1:
			renewed = time.Now()
			continue
		case err == nil:
			l.log.Warn("lock lost: taken over after it expired", "key", k, "owner", l.Owner)
			return
		case time.Since(renewed) >= ttl:
			l.log.Warn("lock lost: not renewed within its ttl", "key", k, "owner", l.Owner, "err", err)
			return
		}
	}
}
