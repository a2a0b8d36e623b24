package telegram

import (
	"sync"
	"time"
)

// inOrder runs fn after the chat's earlier work (a.order), as work shutdown
// waits for (drain). The engine's lanes keep each chat's order from Submit
// on; a.order keeps it up to Submit, so what one chat waits for (a
// permission check, flood control on a notice) never holds up another chat,
// nor the goroutine that receives updates.
func (a *Adapter) inOrder(chatID int64, fn func()) {
	a.order.Do(chatID, fn)
}

// permTTL is how long a member's right to manage a group is remembered, and
// maxPerms how many answers are.
const (
	permTTL  = time.Minute
	maxPerms = 10000
)

// permKey is a member of a group.
type permKey struct{ chatID, userID int64 }

type permAnswer struct {
	manage bool
	until  time.Time
}

// permCache remembers getChatMember's answers for permTTL, so a member's
// commands in a row cost one call. A promotion or demotion shows within
// that time.
type permCache struct {
	mu sync.Mutex
	m  map[permKey]permAnswer
}

func (c *permCache) get(k permKey, now time.Time) (manage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.until) {
		return false, false
	}
	return e.manage, true
}

func (c *permCache) put(k permKey, manage bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[permKey]permAnswer{}
	}
	if len(c.m) >= maxPerms {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		// Still full of fresh answers: forget any one of them.
		for k := range c.m {
			if len(c.m) < maxPerms {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = permAnswer{manage: manage, until: now.Add(permTTL)}
}

// sparse paces a warning anyone can cause: at most one per every, which
// tells how many were held back since the last.
type sparse struct {
	every time.Duration

	mu   sync.Mutex
	last time.Time
	held int
}

// take reports whether to log now and, when it does, how many it held
// back before.
func (s *sparse) take(now time.Time) (ok bool, held int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() && now.Sub(s.last) < s.every {
		s.held++
		return false, 0
	}
	held, s.last, s.held = s.held, now, 0
	return true, held
}
