package bot

import (
	"context"
	"sync"
)

// recallNotes counts, per chat, the recall records (recall counts and the
// inspector's diagnostic) still being written off their turns' path, so
// that /why right after a reply reads that turn's record and not the one
// before it.
type recallNotes struct {
	mu      sync.Mutex
	pending map[string]*pendingNotes
}

type pendingNotes struct {
	n    int
	done chan struct{}
}

// start counts one write for chatID; the returned function ends it.
func (r *recallNotes) start(chatID string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]*pendingNotes{}
	}
	p := r.pending[chatID]
	if p == nil {
		p = &pendingNotes{done: make(chan struct{})}
		r.pending[chatID] = p
	}
	p.n++
	return sync.OnceFunc(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if p.n--; p.n == 0 {
			close(p.done)
			delete(r.pending, chatID)
		}
	})
}

// wait returns once chatID has no write in flight, or when ctx is done.
func (r *recallNotes) wait(ctx context.Context, chatID string) {
	r.mu.Lock()
	p := r.pending[chatID]
	r.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case <-p.done:
	case <-ctx.Done():
	}
}
