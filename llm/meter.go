package llm

import (
	"context"

	"troupe/usage"
)

// meter adds a finished call to m (nil counts nothing) under the kind ctx
// names, else fallback.
func meter(ctx context.Context, m usage.Meter, fallback string, prompt, completion int, err error) {
	if m == nil {
		return
	}
	m.Add(usage.Call{Kind: usage.KindOf(ctx, fallback), PromptTokens: prompt, CompletionTokens: completion, Failed: err != nil})
}
