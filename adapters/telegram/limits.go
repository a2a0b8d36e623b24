package telegram

import (
	"sync"
	"time"
)

// rateLimiter gives each user perMinute messages a minute: a token bucket
// of that size, refilled continuously. A user over the limit is told once,
// then ignored until a token is back, so a flood neither queues without
// end nor gets a notice per message.
type rateLimiter struct {
	perMinute int
	now       func() time.Time

	mu    sync.Mutex
	users map[int64]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	warned bool
}

// maxBuckets is how many users the limiter tracks before it forgets the
// ones whose buckets are full again.
const maxBuckets = 10000

func newRateLimiter(perMinute int, now func() time.Time) *rateLimiter {
	return &rateLimiter{perMinute: perMinute, now: now, users: map[int64]*bucket{}}
}

// allow takes a token for user. It reports whether the message may go on
// and, when it may not, whether to tell the user.
func (r *rateLimiter) allow(user int64) (ok, warn bool) {
	if r.perMinute <= 0 {
		return true, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b := r.users[user]
	if b == nil {
		if len(r.users) >= maxBuckets {
			r.forgetFull(now)
		}
		b = &bucket{tokens: float64(r.perMinute), at: now}
		r.users[user] = b
	}
	r.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		b.warned = false
		return true, false
	}
	warn = !b.warned
	b.warned = true
	return false, warn
}

func (r *rateLimiter) refill(b *bucket, now time.Time) {
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(r.perMinute), b.tokens+el.Minutes()*float64(r.perMinute))
		b.at = now
	}
}

func (r *rateLimiter) forgetFull(now time.Time) {
	for id, b := range r.users {
		r.refill(b, now)
		if b.tokens >= float64(r.perMinute) {
			delete(r.users, id)
		}
	}
}

// seenSet remembers the last update ids handled, so an update delivered
// twice (a webhook retry, a poll after a failed save) is handled once.
type seenSet struct {
	mu    sync.Mutex
	ids   map[int]struct{}
	order []int
	max   int
}

func newSeenSet(max int) *seenSet {
	return &seenSet{ids: map[int]struct{}{}, max: max}
}

func (s *seenSet) has(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

// add records id; it reports false when id was already there.
func (s *seenSet) add(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	s.ids[id] = struct{}{}
	s.order = append(s.order, id)
	if len(s.order) > s.max {
		delete(s.ids, s.order[0])
		s.order = s.order[1:]
	}
	return true
}
