package bot

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// Messages writes the messages of one streamed reply on a platform; M is
// the platform's handle of a posted message. final says the text is the
// reply's last: the platform may wait out its limits and retry then, where
// a streaming write is best effort.
type Messages[M any] interface {
	// Post sends piece i of the reply as a new message.
	Post(ctx context.Context, i int, piece string, final bool) (M, error)
	// Edit makes m, the reply's message i, show piece instead.
	Edit(ctx context.Context, m M, i int, piece string, final bool) error
	// Delete removes m; a message already gone is no error.
	Delete(ctx context.Context, m M) error
}

// RenderOptions are what a platform tells the Renderer of its messages.
type RenderOptions struct {
	// MaxLen is the most characters (runes) a message holds; Split cuts
	// at it.
	MaxLen int
	// Split, when set, cuts a text into messages instead (a platform that
	// counts its limit otherwise, or keeps room for a speaker's name).
	Split func(text string) []string
	// EditInterval is the least time between two writes of one message,
	// and between two writes of a streamed reply.
	EditInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// HoldFor reports how long the platform asked to be left alone after
	// a write failed with err (flood control); nil: it never asks.
	HoldFor func(err error) (time.Duration, bool)
	// Replace reports whether a message whose final edit failed with err
	// is posted anew; nil: always.
	Replace func(err error) bool
	// Log takes what the renderer gives up on; nil discards it.
	Log *slog.Logger
}

// Renderer streams one reply into a platform's messages: it splits the text
// at the platform's limit, shows it as it grows with edits kept at most one
// per EditInterval, delivers the final text exactly (editing, posting anew a
// message that refuses the edit, and deleting messages the final text no
// longer needs), and takes the reply back when it is broken off. It is not
// safe for concurrent use: one goroutine (or one lock) drives it.
type Renderer[M any] struct {
	out   Messages[M]
	opt   RenderOptions
	parts []rendered[M]
	// lastWrite is when the reply was last written; holdUntil is when
	// flood control lets it be written again.
	lastWrite, holdUntil time.Time
}

// rendered is one message of the reply and what it shows.
type rendered[M any] struct {
	m    M
	text string
	at   time.Time
}

// NewRenderer returns a renderer of one reply into out.
func NewRenderer[M any](out Messages[M], opt RenderOptions) *Renderer[M] {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Renderer[M]{out: out, opt: opt}
}

func (r *Renderer[M]) split(text string) []string {
	if r.opt.Split != nil {
		return r.opt.Split(text)
	}
	return Split(text, r.opt.MaxLen)
}

// Messages returns the reply's messages, in order.
func (r *Renderer[M]) Messages() []M {
	out := make([]M, len(r.parts))
	for i, p := range r.parts {
		out[i] = p.m
	}
	return out
}

// Show shows the reply so far, when it may: the first text at once, later
// text when EditInterval has passed since the reply was last written and
// flood control does not hold it. It returns how long until it may write
// again when it held back, else 0. A failed write is left for a later Show
// or Finish to repair.
func (r *Renderer[M]) Show(ctx context.Context, text string) time.Duration {
	pieces := r.split(text)
	if len(pieces) == 0 {
		return 0
	}
	due := r.holdUntil
	if len(r.parts) > 0 {
		due = later(due, r.lastWrite.Add(r.opt.EditInterval))
	}
	if now := r.opt.Now(); now.Before(due) {
		return due.Sub(now)
	}
	for i, piece := range pieces {
		if i < len(r.parts) && r.parts[i].text == piece {
			continue
		}
		var err error
		if i < len(r.parts) {
			if err = r.out.Edit(ctx, r.parts[i].m, i, piece, false); err == nil {
				r.parts[i].text, r.parts[i].at = piece, r.opt.Now()
			}
		} else {
			var m M
			if m, err = r.out.Post(ctx, i, piece, false); err == nil {
				r.parts = append(r.parts, rendered[M]{m: m, text: piece, at: r.opt.Now()})
			}
		}
		r.lastWrite = r.opt.Now()
		if err != nil {
			r.hold(err)
			r.opt.Log.Debug("stream update skipped", "err", err)
			return 0
		}
	}
	return 0
}

// Finish makes the reply's messages show exactly the final text's pieces,
// in order, each edit at least EditInterval after the last write of its
// message and none while flood control holds; a message whose edit is
// refused is posted anew (see Replace). Once every piece is shown, the
// messages left over from a longer streamed text are deleted. It returns
// the error that kept a piece from being shown.
func (r *Renderer[M]) Finish(ctx context.Context, text string) error {
	pieces := r.split(text)
	for i, piece := range pieces {
		if i < len(r.parts) && r.parts[i].text == piece {
			continue
		}
		due := r.holdUntil
		if i < len(r.parts) {
			due = later(due, r.parts[i].at.Add(r.opt.EditInterval))
		}
		if err := sleepCtx(ctx, due.Sub(r.opt.Now())); err != nil {
			return err
		}
		if i < len(r.parts) {
			err := r.out.Edit(ctx, r.parts[i].m, i, piece, true)
			r.lastWrite = r.opt.Now()
			if err == nil {
				r.parts[i].text, r.parts[i].at = piece, r.lastWrite
				continue
			}
			r.hold(err)
			if r.opt.Replace != nil && !r.opt.Replace(err) {
				return err
			}
			r.opt.Log.Warn("final edit refused; posting the piece anew", "err", err)
		}
		m, err := r.out.Post(ctx, i, piece, true)
		r.lastWrite = r.opt.Now()
		if err != nil {
			r.hold(err)
			return err
		}
		p := rendered[M]{m: m, text: piece, at: r.lastWrite}
		if i < len(r.parts) {
			r.parts[i] = p
		} else {
			r.parts = append(r.parts, p)
		}
	}
	n := min(len(pieces), len(r.parts))
	for _, p := range r.parts[n:] {
		if err := r.out.Delete(ctx, p.m); err != nil {
			r.opt.Log.Warn("delete a leftover reply message", "err", err)
		}
	}
	r.parts = r.parts[:n]
	return nil
}

// TakeBack deletes every message of the reply (a reply broken off, which
// was not stored) and returns the first error of a delete.
func (r *Renderer[M]) TakeBack(ctx context.Context) error {
	var first error
	for _, p := range r.parts {
		if err := r.out.Delete(ctx, p.m); err != nil && first == nil {
			first = err
		}
	}
	r.parts = nil
	return first
}

// hold keeps the reply from being written while flood control asks.
func (r *Renderer[M]) hold(err error) {
	if r.opt.HoldFor == nil {
		return
	}
	if d, ok := r.opt.HoldFor(err); ok {
		r.holdUntil = r.opt.Now().Add(d)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
