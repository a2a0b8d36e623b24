package llm

import (
	"context"
	"errors"

	"troupe/bot"
	"troupe/memory"
	"troupe/prompt"
)

// Scribe adapts a Client to the memory package's scribe: one non-streaming
// completion per call. JSON lets CompleteJSON ask the endpoint for
// response_format json_object; without it CompleteJSON is Complete.
type Scribe struct {
	C    *Client
	JSON bool
}

var (
	_ memory.Scribe     = Scribe{}
	_ memory.JSONScribe = Scribe{}
)

// Complete sends msgs and returns the answer's text.
func (s Scribe) Complete(ctx context.Context, msgs []prompt.Message) (string, error) {
	return s.complete(ctx, msgs, false)
}

// CompleteJSON is Complete for an answer that must be one JSON object.
func (s Scribe) CompleteJSON(ctx context.Context, msgs []prompt.Message) (string, error) {
	return s.complete(ctx, msgs, s.JSON)
}

func (s Scribe) complete(ctx context.Context, msgs []prompt.Message, json bool) (string, error) {
	res, err := s.C.Complete(ctx, bot.ModelRequest{Messages: msgs, JSON: json})
	if err != nil {
		var me *bot.ModelError
		if errors.As(err, &me) {
			me.Source = sourceScribe
		}
		return "", err
	}
	return res.Text, nil
}
