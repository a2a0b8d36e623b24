package bot

import "time"

// Observer is told what the pipeline did, for metrics. All methods must be
// safe for concurrent use and quick.
type Observer interface {
	// TurnObserved reports a finished turn: its outcome ("answered",
	// "failed", "too_large", "refused", "over_budget": a model budget was
	// spent and the model not called), the pipeline's own time and the model's time,
	// the tokens the API reported and the prompt's size in messages.
	TurnObserved(t TurnStats)
	// Forgotten reports a confirmed /forget.
	Forgotten(platform string)
	// SendFailed reports a reply a platform could not deliver.
	SendFailed(platform string)
	// Panicked reports a panic recovered where ("turn", "command",
	// "discord_event", "telegram_update", …): the process went on.
	Panicked(where string)
}

// TurnStats describes one turn for an Observer.
type TurnStats struct {
	Platform string
	Outcome  string
	Pipeline time.Duration
	// Queued is how long the turn waited for a slot before its pipeline
	// work began (not part of Pipeline).
	Queued           time.Duration
	Model            time.Duration
	PromptTokens     int
	CompletionTokens int
	PromptMessages   int
	// Recall is how the turn's recall went (RecallFull, RecallFewer,
	// RecallCached, RecallLate); "" when it recalled nothing.
	Recall string
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) TurnObserved(TurnStats) {}
func (nopObserver) Forgotten(string)       {}
func (nopObserver) SendFailed(string)      {}
func (nopObserver) Panicked(string)        {}
