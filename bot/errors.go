package bot

import "errors"

// Sentinel errors of the pipeline.
var (
	// ErrNoCard: the channel has no card and the library has no default.
	ErrNoCard = errors.New("bot: no card bound to this channel")
	// ErrBusy: a reply is being written in this channel.
	ErrBusy = errors.New("bot: a reply is being written")
	// ErrClosed: the pipeline is shutting down and takes no new turns.
	ErrClosed = errors.New("bot: shutting down")
	// ErrPromptTooLarge: even the last keep beats do not fit the context.
	ErrPromptTooLarge = errors.New("bot: prompt does not fit the model's context window")
)
