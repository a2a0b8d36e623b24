// Package usage counts the calls troupe makes to model endpoints, by kind
// (a turn's reply, each memory job's scribe call, embeddings, rerank,
// captions, speech) and by day, so an operator can see what the memory
// layers cost. A call's kind travels in its context (WithKind); the model
// client adds each finished call to a Meter; a Counter sums them in memory
// until they are drained into the store. It imports nothing of troupe's.
package usage

import (
	"context"
	"sync"
	"time"
)

// The kinds the model client falls back to when the context names none.
const (
	Chat   = "chat"
	Embed  = "embed"
	Rerank = "rerank"
)

type kindKey struct{}

// WithKind returns ctx naming the kind of the model calls made with it.
func WithKind(ctx context.Context, kind string) context.Context {
	return context.WithValue(ctx, kindKey{}, kind)
}

// KindOf is the kind ctx names, else fallback.
func KindOf(ctx context.Context, fallback string) string {
	if k, ok := ctx.Value(kindKey{}).(string); ok && k != "" {
		return k
	}
	return fallback
}

// Call is one finished call to a model endpoint.
type Call struct {
	Kind string
	// PromptTokens and CompletionTokens are what the endpoint reported,
	// 0 when it reported none.
	PromptTokens, CompletionTokens int
	// Failed is true when the call ended in an error.
	Failed bool
}

// Meter receives each finished call.
type Meter interface {
	Add(c Call)
}

// Row is the calls of one kind on one day.
type Row struct {
	// Day is the local date, YYYY-MM-DD.
	Day              string
	Kind             string
	Calls, Failures  int
	PromptTokens     int64
	CompletionTokens int64
}

// Counter sums calls by day and kind until Drain takes them. It is safe
// for concurrent use; the zero value counts by the local clock.
type Counter struct {
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu   sync.Mutex
	rows map[[2]string]*Row
}

var _ Meter = (*Counter)(nil)

// Add counts c under today's date.
func (c *Counter) Add(call Call) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	day := now().Format(time.DateOnly)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[[2]string]*Row{}
	}
	k := [2]string{day, call.Kind}
	r := c.rows[k]
	if r == nil {
		r = &Row{Day: day, Kind: call.Kind}
		c.rows[k] = r
	}
	r.Calls++
	if call.Failed {
		r.Failures++
	}
	r.PromptTokens += int64(call.PromptTokens)
	r.CompletionTokens += int64(call.CompletionTokens)
}

// Drain returns what was counted since the last Drain and starts over.
func (c *Counter) Drain() []Row {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Row, 0, len(c.rows))
	for _, r := range c.rows {
		out = append(out, *r)
	}
	c.rows = nil
	return out
}

// Putback adds rows a failed store write could not keep back into the
// count, so the next drain writes them.
func (c *Counter) Putback(rows []Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[[2]string]*Row{}
	}
	for _, r := range rows {
		k := [2]string{r.Day, r.Kind}
		if have := c.rows[k]; have != nil {
			have.Calls += r.Calls
			have.Failures += r.Failures
			have.PromptTokens += r.PromptTokens
			have.CompletionTokens += r.CompletionTokens
			continue
		}
		cp := r
		c.rows[k] = &cp
	}
}
