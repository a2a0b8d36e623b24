package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxModelList bounds the model list read: some servers list thousands.
const maxModelList = 8 << 20

// ReportedWindow asks the endpoint's model list (GET /models) for the
// context window of the client's model, under the names servers use for it:
// max_model_len (vLLM), context_length (OpenRouter, LM Studio),
// context_window. It returns 0, and no error, when the list does not say;
// an error only when the list could not be read at all. OpenAI's own list
// says nothing of windows.
func (c *Client) ReportedWindow(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	base := c.cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return 0, c.wrap("model list", err)
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, c.wrap("model list", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, c.wrap("model list", fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			MaxModelLen   int    `json:"max_model_len"`
			ContextLength int    `json:"context_length"`
			ContextWindow int    `json:"context_window"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelList)).Decode(&list); err != nil {
		return 0, c.wrap("model list", err)
	}
	for _, m := range list.Data {
		if m.ID != c.cfg.Model {
			continue
		}
		for _, n := range []int{m.MaxModelLen, m.ContextLength, m.ContextWindow} {
			if n > 0 {
				return n, nil
			}
		}
	}
	return 0, nil
}
