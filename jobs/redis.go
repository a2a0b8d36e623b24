package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// quietRedis routes go-redis's own messages (dial failures while Redis is
// away, which the callers already handle) to slog at debug level.
type quietRedis struct{}

func (quietRedis) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

var quietOnce sync.Once

// Redis is a connection to the queue's Redis, real or in-process.
type Redis struct {
	Client   redis.UniversalClient
	embedded *miniredis.Miniredis
	// stopClock ends the in-process Redis's clock (runClock).
	stopClock func()
}

// clockTick is how often the in-process Redis's keys age: a key outlives
// its TTL by at most this much, never expires early.
const clockTick = 50 * time.Millisecond

// runClock ages the in-process Redis's TTLs with the wall clock every
// clockTick until done closes. miniredis's own ClockTTL does it before
// every command, over every key it holds (the queue's task keys grow with
// the chats), which cost about 2% of a busy troupe bench's CPU at 100
// chats and more with more chats.
func runClock(m *miniredis.Miniredis, done <-chan struct{}) {
	t := time.NewTicker(clockTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			now := time.Now()
			m.FastForward(now.Sub(last))
			last = now
		}
	}
}

// OpenRedis connects to url, or starts an in-process Redis (served over an
// in-memory pipe, no port opened) when url is empty.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	quietOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	if url == "" {
		m := miniredis.NewMiniRedis()
		c := redis.NewClient(&redis.Options{
			Dialer: func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
			// One pipe per connection; keep the pool small.
			PoolSize: 16,
		})
		done := make(chan struct{})
		go runClock(m, done)
		return &Redis{Client: c, embedded: m, stopClock: sync.OnceFunc(func() { close(done) })}, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("jobs: redis url: %w", redactURLErr(err))
	}
	// Fail fast while Redis is away: turns go on without the queue and the
	// sweeper re-derives what was owed once it is back.
	opt.DialTimeout = time.Second
	opt.ReadTimeout = 3 * time.Second
	opt.WriteTimeout = 3 * time.Second
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("jobs: redis at %s: %w", opt.Addr, err)
	}
	return &Redis{Client: c}, nil
}

func redactURLErr(error) error { return fmt.Errorf("invalid redis URL") }

// Embedded reports whether this is the in-process Redis.
func (r *Redis) Embedded() bool { return r.embedded != nil }

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.Client.Ping(ctx).Err() }

// Close closes the connection and stops an in-process Redis.
func (r *Redis) Close() error {
	err := r.Client.Close()
	if r.embedded != nil {
		r.stopClock()
		r.embedded.Close()
	}
	return err
}
