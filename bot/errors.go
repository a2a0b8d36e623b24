package bot

import "errors"

// Sentinel errors of the pipeline.
var (
	// ErrNoCard: the channel has no card and the library has no default.
	ErrNoCard = errors.New("bot: no card bound to this channel")
	// ErrClosed: the pipeline is shutting down and takes no new turns.
	ErrClosed = errors.New("bot: shutting down")
	// ErrNotStored: a message could not be stored; the platform should
	// deliver it again.
	ErrNotStored = errors.New("bot: message not stored")
	// ErrPromptTooLarge: even the last keep beats do not fit the context.
	ErrPromptTooLarge = errors.New("bot: prompt does not fit the model's context window")
	// ErrNoPrivateAnswer: a Confiding sink cannot reach the author alone
	// here; nothing was shown.
	ErrNoPrivateAnswer = errors.New("bot: cannot answer the author alone here")
	// ErrPanicked: a turn or a command panicked; it was logged, counted
	// and answered with a notice, and the channel went on.
	ErrPanicked = errors.New("bot: recovered from a panic")
)
