package keyed

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestOrderPerKey: each key's functions run in the order handed over, one
// at a time.
func TestOrderPerKey(t *testing.T) {
	t.Parallel()
	var r Runner[string]
	var mu sync.Mutex
	got := map[string][]int{}
	running := map[string]int{}
	const n = 200
	for i := range n {
		for _, k := range []string{"a", "b", "c"} {
			r.Do(k, func() {
				mu.Lock()
				running[k]++
				if running[k] > 1 {
					t.Errorf("key %s: %d functions at once, want 1", k, running[k])
				}
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				running[k]--
				got[k] = append(got[k], i)
				mu.Unlock()
			})
		}
	}
	r.Wait()
	for _, k := range []string{"a", "b", "c"} {
		if len(got[k]) != n {
			t.Fatalf("key %s ran %d functions, want %d", k, len(got[k]), n)
		}
		if !slices.IsSorted(got[k]) {
			t.Errorf("key %s ran out of order: %v", k, got[k])
		}
	}
}

// TestKeysInParallel: a key whose work blocks does not hold up another.
func TestKeysInParallel(t *testing.T) {
	t.Parallel()
	var r Runner[int64]
	release := make(chan struct{})
	r.Do(1, func() { <-release })
	done := make(chan struct{})
	r.Do(2, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("key 2 waited for key 1's blocked work")
	}
	// Key 1's next function waits for the blocked one.
	second := make(chan struct{})
	r.Do(1, func() { close(second) })
	select {
	case <-second:
		t.Fatal("key 1's second function ran before its first ended")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-second
	r.Wait()
}

// TestIdleHoldsNoGoroutine: once a key's work is done its goroutine is
// gone and the key forgotten.
func TestIdleHoldsNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	var r Runner[string]
	for i := range 50 {
		r.Do(string(rune('a'+i%26))+string(rune('a'+i/26)), func() {})
	}
	r.Wait()
	r.mu.Lock()
	left := len(r.waiting)
	r.mu.Unlock()
	if left != 0 {
		t.Errorf("keys remembered after Wait: %d, want 0", left)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d after the work ended, want at most %d", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
	// The key starts afresh when work arrives again.
	ran := make(chan struct{})
	r.Do("aa", func() { close(ran) })
	<-ran
	r.Wait()
}

// TestWait: Wait returns at once on an idle Runner, and otherwise once the
// work queued before it and while it waits has run.
func TestWait(t *testing.T) {
	t.Parallel()
	var r Runner[string]
	r.Wait() // idle: returns at once

	release := make(chan struct{})
	var mu sync.Mutex
	var ran []string
	note := func(s string) { mu.Lock(); ran = append(ran, s); mu.Unlock() }
	r.Do("a", func() { <-release; note("a1") })
	r.Do("b", func() { note("b1") })
	waited := make(chan struct{})
	go func() { r.Wait(); close(waited) }()
	r.Do("a", func() { note("a2") })
	select {
	case <-waited:
		t.Fatal("Wait returned while key a's work was blocked")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after the work ended")
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(ran)
	if want := []string{"a1", "a2", "b1"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v before Wait returned, want %v", ran, want)
	}
}

// TestLimit: past Limit functions waiting behind a key's running one, Do
// refuses and the function never runs; other keys are not affected, and
// the key takes work again once its queue shortens.
func TestLimit(t *testing.T) {
	t.Parallel()
	r := Runner[string]{Limit: 2}
	release := make(chan struct{})
	var mu sync.Mutex
	var ran []int
	note := func(i int) func() { return func() { mu.Lock(); ran = append(ran, i); mu.Unlock() } }
	if !r.Do("a", func() { <-release; note(0)() }) {
		t.Fatal("Do refused the first function")
	}
	for i := 1; i <= 2; i++ {
		if !r.Do("a", note(i)) {
			t.Fatalf("Do refused function %d with %d waiting, limit 2", i, i-1)
		}
	}
	if r.Do("a", note(3)) {
		t.Error("Do took a third waiting function, limit 2")
	}
	if !r.Do("b", func() {}) {
		t.Error("Do refused another key's function")
	}
	close(release)
	r.Wait()
	if !r.Do("a", note(4)) {
		t.Error("Do refused work on an idle key")
	}
	r.Wait()
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 2, 4}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
}
