package memory

import (
	"context"

	"troupe/prompt"
)

// Pacer is told when a memory job waits on something outside its own
// work: the scribe's answer, or a lock another job holds. troupe's job
// worker puts one in each job's context, so that while the job waits its
// share of the CPU goes to other work.
type Pacer interface {
	// Waiting is called as a wait begins; the func it returns, as the
	// wait ends. Waits of one job may overlap.
	Waiting(ctx context.Context) (done func())
}

type pacerKey struct{}

// WithPacer returns ctx carrying p for the memory jobs run with it.
func WithPacer(ctx context.Context, p Pacer) context.Context {
	return context.WithValue(ctx, pacerKey{}, p)
}

// waiting tells ctx's pacer, if any, that a wait begins, and returns what
// ends it.
func waiting(ctx context.Context) (done func()) {
	if p, ok := ctx.Value(pacerKey{}).(Pacer); ok {
		return p.Waiting(ctx)
	}
	return func() {}
}

// complete asks the scribe, telling the job's pacer it waits meanwhile.
func (s *Service) complete(ctx context.Context, msgs []prompt.Message) (string, error) {
	defer waiting(ctx)()
	return s.scribe.Complete(ctx, msgs)
}
