package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Locker hands out Redis locks, so that several processes never work on the
// same chat at once: its turns (in troupe serve) or its memory jobs (in
// troupe worker).
type Locker struct {
	rdb redis.UniversalClient
	// TTL bounds how long a crashed holder blocks others; a live holder
	// refreshes it.
	TTL time.Duration
}

// NewLocker returns a locker on r.
func NewLocker(r *Redis) *Locker { return &Locker{rdb: r.Client, TTL: 30 * time.Second} }

// ErrLockBusy: the lock is held elsewhere and TryLock does not wait.
var ErrLockBusy = errors.New("jobs: lock held by another process")

var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
var refreshScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// Lock waits for the lock on key (until ctx is done) and returns its release.
func (l *Locker) Lock(ctx context.Context, key string) (func(), error) {
	for {
		unlock, err := l.TryLock(ctx, key)
		if !errors.Is(err, ErrLockBusy) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(15 * time.Millisecond):
		}
	}
}

// TryLock takes the lock on key if it is free, else returns ErrLockBusy.
func (l *Locker) TryLock(ctx context.Context, key string) (func(), error) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	k := "troupe:lock:" + key
	ok, err := l.rdb.SetNX(ctx, k, token, l.TTL).Result()
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
		t := time.NewTicker(l.TTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				refreshScript.Run(context.Background(), l.rdb, []string{k}, token, l.TTL.Milliseconds())
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		unlockScript.Run(ctx, l.rdb, []string{k}, token)
	}, nil
}
