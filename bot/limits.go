package bot

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits bound what one user can ask of the pipeline.
type Limits struct {
	// PerMinute is how many messages a user may send per minute, across
	// channels of a platform; 0 turns the limit off.
	PerMinute int
	// MaxChars is the longest message taken; 0 means no limit.
	MaxChars int
}

// rateLimiter is a token bucket per user.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	perMin  int
}

type bucket struct {
	tokens float64
	last   time.Time
	warned bool
}

// allow takes a token for key. It returns whether the message may go on and,
// when it may not, whether this is the first refusal of the streak (the one
// that gets a polite notice).
func (r *rateLimiter) allow(key string, now time.Time) (ok, notify bool) {
	if r.perMin <= 0 {
		return true, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buckets == nil {
		r.buckets = map[string]*bucket{}
	}
	b, found := r.buckets[key]
	if !found {
		b = &bucket{tokens: float64(r.perMin), last: now}
		r.buckets[key] = b
		if len(r.buckets) > 100000 {
			r.evict(now)
		}
	}
	b.tokens = min(float64(r.perMin), b.tokens+now.Sub(b.last).Minutes()*float64(r.perMin))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		b.warned = false
		return true, false
	}
	notify = !b.warned
	b.warned = true
	return false, notify
}

// evict drops buckets that have refilled: they hold no information.
func (r *rateLimiter) evict(now time.Time) {
	for k, b := range r.buckets {
		if now.Sub(b.last) > time.Minute {
			delete(r.buckets, k)
		}
	}
}

// overRate takes a token of in's user's rate. Over the limit it tells the
// user once per streak and reports true. The console's one local user is
// not limited.
func (p *Pipeline) overRate(ctx context.Context, in Inbound, sink Sink) (bool, error) {
	if in.Channel.Platform == PlatformConsole {
		return false, nil
	}
	ok, notify := p.rate.allow(in.UserKey(), p.opt.Now())
	if ok {
		return false, nil
	}
	if notify {
		return true, sink.Notice(ctx, p.text(p.langOf(in), msgSlowDown))
	}
	return true, nil
}

func tooLong(text string, max int) bool {
	return max > 0 && utf8.RuneCountInString(text) > max
}
