package memory

import (
	"context"
	"fmt"
	"sync"
)

// Locker hands out named locks shared by every process of a deployment;
// jobs.Locker satisfies it. Lock waits for key until ctx is done and
// returns the release.
type Locker interface {
	Lock(ctx context.Context, key string) (func(), error)
}

// UseLocker makes the service take its cross-process locks from l (troupe
// wires its Redis locks). Without one, a lock only serializes the
// goroutines of this process.
func (s *Service) UseLocker(l Locker) {
	s.locker = l
}

// JobLockKey is the lock a memory job of kind (KindCompact, KindRecord,
// KindReflect, …) holds while it works on key (a chat id, or "card|space"
// for a consolidation). The worker and a GM's run-now command both build
// it here, so the two never work on one chat at once.
func JobLockKey(kind, key string) string { return "memory:" + kind + ":" + key }

// spaceReflectionLock is the lock every reflection of a space holds: the
// characters and beliefs of a space are shared by all its chats, so two of
// its chats never reflect at once, while different spaces do.
func spaceReflectionLock(spaceID string) string { return JobLockKey("reflect-space", spaceID) }

// lock takes key: from the Locker when there is one, else in this process.
func (s *Service) lock(ctx context.Context, key string) (func(), error) {
	defer waiting(ctx)()
	if s.locker != nil {
		unlock, err := s.locker.Lock(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("memory: lock %s: %w", key, err)
		}
		return unlock, nil
	}
	return s.local.lock(ctx, key)
}

// localLocks are the locks of one process, by key: a channel of one slot
// each, so that waiting can end with ctx.
type localLocks struct {
	mu    sync.Mutex
	slots map[string]chan struct{}
}

func (l *localLocks) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	if l.slots == nil {
		l.slots = map[string]chan struct{}{}
	}
	slot, ok := l.slots[key]
	if !ok {
		slot = make(chan struct{}, 1)
		l.slots[key] = slot
	}
	l.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("memory: lock %s: %w", key, ctx.Err())
	}
}
