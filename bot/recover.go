package bot

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// Recovered is for a deferred function that recovered v, a panic, while
// handling something where (a turn, an adapter's event): it logs the panic
// with its stack, counts it (Observer.Panicked) and returns the short
// notice to answer the channel with. The log line holds the panic's type,
// a runtime error's message and the stack, never the value of another
// panic, which may quote story text.
func (p *Pipeline) Recovered(where string, v any) (notice string) {
	p.log.Error("panic recovered; the process goes on", "where", where, "panic", panicKind(v), "stack", string(debug.Stack()))
	p.opt.Observer.Panicked(where)
	return p.text(p.opt.Language, msgPanicked)
}

// survive recovers a panic in a goroutine a turn started beside its own
// work (a read it waits for, a write after it): logged and counted as
// any other, with no notice of its own (the turn answers); err, when not
// nil, is set to ErrPanicked for the turn that waits. It must be deferred
// directly.
func (p *Pipeline) survive(where string, err *error) {
	if v := recover(); v != nil {
		p.Recovered(where, v)
		if err != nil {
			*err = ErrPanicked
		}
	}
}

// panicKind describes a panic value without quoting text it may carry.
func panicKind(v any) string {
	if err, ok := v.(runtime.Error); ok {
		return err.Error()
	}
	return fmt.Sprintf("%T", v)
}

// guard runs fn, a turn or a command of the channel in, and turns a panic
// in it into an error after logging and counting it and answering sink
// with a notice, so that the channel's lane goes on with its next turn.
func (p *Pipeline) guard(ctx context.Context, where string, in Inbound, sink Sink, fn func() error) (err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		notice := p.Recovered(where, v)
		if lang := p.safeLang(in); lang != p.opt.Language {
			notice = p.text(lang, msgPanicked)
		}
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		func() {
			defer func() { _ = recover() }() // a sink that panics too says nothing
			_ = sink.Notice(nctx, notice)
		}()
		err = fmt.Errorf("%w: panic in a %s", ErrPanicked, where)
	}()
	return fn()
}

// safeLang is langOf, or the configured language if that panics too.
func (p *Pipeline) safeLang(in Inbound) (lang string) {
	defer func() {
		if recover() != nil {
			lang = p.opt.Language
		}
	}()
	return p.langOf(in)
}
