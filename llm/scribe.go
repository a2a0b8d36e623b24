package llm

import (
	"context"

	"troupe/bot"
	"troupe/memory"
)

// Scribe adapts a Client to the memory package's scribe: one non-streaming
// completion per call.
type Scribe struct{ C *Client }

var _ memory.Scribe = Scribe{}

// Complete sends msgs and returns the answer's text.
func (s Scribe) Complete(ctx context.Context, msgs []memory.Message) (string, error) {
	res, err := s.C.Complete(ctx, bot.ModelRequest{Messages: msgs})
	if err != nil {
		return "", err
	}
	return res.Text, nil
}
