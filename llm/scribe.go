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
	req := bot.ModelRequest{Messages: make([]bot.PromptMessage, len(msgs))}
	for i, m := range msgs {
		req.Messages[i] = bot.PromptMessage{Role: bot.Role(m.Role), Content: m.Content}
	}
	res, err := s.C.Complete(ctx, req)
	if err != nil {
		return "", err
	}
	return res.Text, nil
}
