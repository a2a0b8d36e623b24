package models

import "errors"

// Sentinel errors of the store.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("models: not found")
	// ErrStale: the chat changed under a write that assumed it had not.
	ErrStale = errors.New("models: stale: the chat moved on")
	// ErrDuplicate: a platform message was already stored.
	ErrDuplicate = errors.New("models: duplicate platform message")
)
