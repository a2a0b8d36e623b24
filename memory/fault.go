package memory

import (
	"context"
	"errors"
	"net"
)

// Fault is what may be stored in a job record, shown in a chat or logged
// at warning level of a failure: its kind and a detail that holds nothing
// an outside service said (a provider's error text can quote a key, an
// address or a prompt).
type Fault struct {
	// Kind is the failed service's kind ("auth", "rate_limited",
	// "timeout", "unavailable", "bad_request", "empty", "cut",
	// "bad_answer"), or FaultBadAnswer, FaultTimeout, FaultCancelled,
	// FaultInternal.
	Kind string
	// Detail says more: which endpoint and HTTP status, or the validator's
	// complaint about the scribe's answer, or troupe's own error.
	Detail string
}

// The kinds of fault memory itself names.
const (
	// FaultBadAnswer: the scribe answered twice with what the contract
	// refuses.
	FaultBadAnswer = "bad_answer"
	FaultTimeout   = "timeout"
	FaultCancelled = "cancelled"
	// FaultInternal: troupe's own failure (the store, a bug).
	FaultInternal = "internal"
)

// serviceError is the failure of an outside service that can account for
// itself without what the service said; *bot.ModelError is one.
type serviceError interface {
	error
	FaultKind() string
	Detail() string
}

// FaultOf returns what may be kept of err. The kind comes from the error's
// type (an outside service's own kind, a rejected answer, a deadline),
// never from its text.
func FaultOf(err error) Fault {
	var se serviceError
	var rej *RejectedError
	var ne net.Error
	switch {
	case err == nil:
		return Fault{}
	case errors.As(err, &se):
		return Fault{Kind: se.FaultKind(), Detail: se.Detail()}
	case errors.As(err, &rej):
		return Fault{Kind: FaultBadAnswer, Detail: rej.Kind + ": scribe output rejected twice: " + rej.Reason}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return Fault{Kind: FaultTimeout}
	case errors.Is(err, context.Canceled):
		return Fault{Kind: FaultCancelled}
	}
	return Fault{Kind: FaultInternal, Detail: err.Error()}
}

// String is the fault as a job record's reason: "auth: embeddings, HTTP 401",
// "bad_answer: recap: scribe output rejected twice: …".
func (f Fault) String() string {
	if f.Detail == "" {
		return f.Kind
	}
	return f.Kind + ": " + f.Detail
}
