package models

import "errors"

// Sentinel errors of the store.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("models: not found")
	// ErrStale: the chat changed under a write that assumed it had not.
	ErrStale = errors.New("models: stale: the chat moved on")
	// ErrChatGone: a write for a chat that no longer exists (it was
	// forgotten): nothing is owed for it any more.
	ErrChatGone = errors.New("models: the chat no longer exists")
	// ErrDuplicate: a platform message was already stored.
	ErrDuplicate = errors.New("models: duplicate platform message")
)
