// Package keyed runs work in order per key: each key's functions one after
// another, in the order they were handed over, on a goroutine of the key's
// own, while other keys' work goes on beside it. A chat's updates, a
// channel's gateway events and a channel's spoken replies all keep their
// order this way without one slow key holding up the rest.
package keyed

import "sync"

// Runner runs the functions handed to it under a key one at a time, in the
// order Do received them. A key's goroutine starts when work arrives for
// a key with none, and ends as soon as the key has nothing left; an idle
// Runner holds no goroutine. The zero Runner is ready to use; a Runner
// must not be copied after first use.
//
// A function must not panic (recover inside it): as in any goroutine, a
// panic ends the program.
type Runner[K comparable] struct {
	// Limit, when positive, bounds how many functions may wait behind a
	// key's running one: past it Do refuses.
	Limit int

	mu sync.Mutex
	// idle is signalled when the last key's goroutine is done.
	idle *sync.Cond
	// waiting holds, for each key with a goroutine, the functions queued
	// behind the one running; a key is absent when it has none.
	waiting map[K][]func()
}

// Do runs fn after the functions handed over under key before it. It
// returns at once: true when fn is queued or started, false when key
// already has Limit functions waiting (then fn never runs).
func (r *Runner[K]) Do(key K, fn func()) bool {
	r.mu.Lock()
	q, running := r.waiting[key]
	if running {
		if r.Limit > 0 && len(q) >= r.Limit {
			r.mu.Unlock()
			return false
		}
		r.waiting[key] = append(q, fn)
		r.mu.Unlock()
		return true
	}
	if r.waiting == nil {
		r.waiting = map[K][]func(){}
	}
	r.waiting[key] = nil
	r.mu.Unlock()
	go r.run(key, fn)
	return true
}

// run runs fn and then key's waiting functions until none is left.
func (r *Runner[K]) run(key K, fn func()) {
	for {
		fn()
		r.mu.Lock()
		q := r.waiting[key]
		if len(q) == 0 {
			delete(r.waiting, key)
			if len(r.waiting) == 0 && r.idle != nil {
				r.idle.Broadcast()
			}
			r.mu.Unlock()
			return
		}
		// Clear the slot so a long queue does not keep run functions
		// (and what they hold) alive.
		fn, q[0] = q[0], nil
		r.waiting[key] = q[1:]
		r.mu.Unlock()
	}
}

// Wait blocks until no key has work queued or running. Work handed over
// while it waits is waited for too; a caller that must not wait forever
// stops handing work over first.
func (r *Runner[K]) Wait() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idle == nil {
		r.idle = sync.NewCond(&r.mu)
	}
	for len(r.waiting) > 0 {
		r.idle.Wait()
	}
}
