package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"troupe/jobs"
	"troupe/models/testenv"
)

// lockRedis returns the Redis of each backend: the embedded one, and the
// test's redis-server where scripts/test provides it.
func lockRedis(t *testing.T) map[string]*jobs.Redis {
	t.Helper()
	urls := map[string]string{"embedded": ""}
	if testenv.Available() {
		urls["redis-server"] = testenv.FreshRedisURL(t)
	}
	out := map[string]*jobs.Redis{}
	for name, u := range urls {
		r, err := jobs.OpenRedis(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		out[name] = r
	}
	return out
}

// TestLockOfDeadHolderIsTakenOverWithinTTL: a holder that stops renewing
// (a process killed with SIGKILL renews nothing) blocks others for at most
// the TTL, while a live holder keeps its lock for as long as it holds it.
func TestLockOfDeadHolderIsTakenOverWithinTTL(t *testing.T) {
	for name, r := range lockRedis(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const ttl = 600 * time.Millisecond
			live := jobs.NewLocker(r)
			live.TTL = ttl
			other := jobs.NewLocker(r)
			other.TTL = ttl
			if live.Owner == other.Owner {
				t.Fatalf("two lockers share the owner id %q", live.Owner)
			}
			release, err := live.Lock(ctx, "k-live")
			if err != nil {
				t.Fatal(err)
			}
			// Renewed: still held after several TTLs.
			deadline := time.Now().Add(3 * ttl)
			for time.Now().Before(deadline) {
				if _, err := other.TryLock(ctx, "k-live"); !errors.Is(err, jobs.ErrLockBusy) {
					t.Fatalf("a renewed lock was taken: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got, _ := other.Holder(ctx, "k-live"); got != live.Owner {
				t.Errorf("holder %q, want %q", got, live.Owner)
			}
			release()
			if got, _ := other.Holder(ctx, "k-live"); got != "" {
				t.Errorf("after release the holder is %q", got)
			}

			// A dead holder: the key as a killed process leaves it,
			// with no one renewing it.
			if err := r.Client.Set(ctx, "troupe:lock:k-dead", "dead-owner/x", ttl).Err(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			lctx, cancel := context.WithTimeout(ctx, 10*ttl)
			defer cancel()
			release, err = other.Lock(lctx, "k-dead")
			if err != nil {
				t.Fatalf("the lock of a dead holder was not taken over: %v", err)
			}
			defer release()
			if waited := time.Since(start); waited > 2*ttl {
				t.Errorf("took over after %v, want within about the TTL %v", waited, ttl)
			}
			if got, _ := other.Holder(ctx, "k-dead"); got != other.Owner {
				t.Errorf("holder %q, want %q", got, other.Owner)
			}
			if jobs.DefaultLockTTL > 10*time.Second {
				t.Errorf("DefaultLockTTL %v: a dead process would block its channels that long", jobs.DefaultLockTTL)
			}
		})
	}
}

// TestLostLockIsNotReleasedOverTheNewHolder: a holder whose lock expired
// (a long pause) and was taken over does not, on release, free the lock of
// the process that holds it now.
func TestLostLockIsNotReleasedOverTheNewHolder(t *testing.T) {
	for name, r := range lockRedis(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			old := jobs.NewLocker(r)
			release, err := old.Lock(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			// The pause: the key expires under the old holder.
			if err := r.Client.Del(ctx, "troupe:lock:k").Err(); err != nil {
				t.Fatal(err)
			}
			next := jobs.NewLocker(r)
			releaseNext, err := next.TryLock(ctx, "k")
			if err != nil {
				t.Fatalf("the expired lock was not free: %v", err)
			}
			defer releaseNext()
			release()
			v, err := r.Client.Get(ctx, "troupe:lock:k").Result()
			if err != nil || !strings.HasPrefix(v, next.Owner+"/") {
				t.Errorf("after the old holder's release the lock reads %q (%v), want held by %s", v, err, next.Owner)
			}
		})
	}
}

// TestLockReleasedHereWakesItsWaiters: a lock released in this process, by
// Lock's holder or TryLock's, goes at once to the callers of this process
// waiting for it, one after another, without waiting for a poll (here an
// hour long); a waiter in another process still takes it by polling.
func TestLockReleasedHereWakesItsWaiters(t *testing.T) {
	for name, r := range lockRedis(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l := jobs.NewLocker(r)
			l.Poll = time.Hour
			first, err := l.TryLock(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			type got struct {
				i       int
				release func()
				err     error
			}
			gots := make(chan got)
			for i := range 3 {
				go func() {
					release, err := l.Lock(ctx, "k")
					gots <- got{i, release, err}
				}()
			}
			select {
			case g := <-gots:
				t.Fatalf("waiter %d took a held lock (err %v)", g.i, g.err)
			case <-time.After(100 * time.Millisecond):
			}
			first()
			for range 3 {
				g := <-gots
				if g.err != nil {
					t.Fatalf("waiter %d: %v (a release here did not wake it)", g.i, g.err)
				}
				if holder, _ := l.Holder(ctx, "k"); holder != l.Owner {
					t.Fatalf("waiter %d holds the lock, Redis says %q does", g.i, holder)
				}
				select {
				case other := <-gots:
					t.Fatalf("waiters %d and %d hold the lock at once", g.i, other.i)
				case <-time.After(20 * time.Millisecond):
				}
				g.release()
			}

			// Another process polls.
			release, err := l.Lock(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			other := jobs.NewLocker(r)
			other.Poll = 10 * time.Millisecond
			done := make(chan error, 1)
			go func() {
				r, err := other.Lock(ctx, "k")
				if err == nil {
					r()
				}
				done <- err
			}()
			time.Sleep(50 * time.Millisecond)
			release()
			if err := <-done; err != nil {
				t.Fatalf("a waiter in another process did not take the released lock: %v", err)
			}
		})
	}
}
