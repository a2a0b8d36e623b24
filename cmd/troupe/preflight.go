package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"troupe/adapters/discord"
	"troupe/adapters/telegram"
	"troupe/config"
)

// probeTimeout bounds each start-up check.
const probeTimeout = 15 * time.Second

// Statuses of a check.
const (
	statusOK      = "ok"
	statusFailed  = "failed"
	statusSkipped = "skipped"
)

// probe is the result of one check of something troupe depends on.
type probe struct {
	Status string
	Detail string
	// Fatal marks a definite refusal (a key or token refused, a model the
	// endpoint does not serve): every later call would fail the same way,
	// so serve and chat stop. A failure that may pass (unreachable, 5xx,
	// 429) only warns at start.
	Fatal bool
}

func ok(format string, args ...any) probe {
	return probe{Status: statusOK, Detail: fmt.Sprintf(format, args...)}
}

func skipped(format string, args ...any) probe {
	return probe{Status: statusSkipped, Detail: fmt.Sprintf(format, args...)}
}

func failed(fatal bool, format string, args ...any) probe {
	return probe{Status: statusFailed, Detail: fmt.Sprintf(format, args...), Fatal: fatal}
}

// startupError is a check that failed at start; it exits 1 with the
// check's own words.
type startupError struct{ msg string }

func (e startupError) Error() string { return "cannot start: " + e.msg }

// preflight runs the start-up checks of serve and chat, at once: the chat
// model, and with platforms the Discord and Telegram tokens, must answer
// (a refused key, an unknown model or a refused token stops the process);
// the scribe (when it is another endpoint), embeddings and rerank only
// warn, as recall and the recorder degrade without them.
func preflight(ctx context.Context, cfg config.Config, log *slog.Logger, platforms bool) error {
	type named struct {
		name string
		main bool
		run  func(context.Context) probe
	}
	checks := []named{
		{"model", true, func(ctx context.Context) probe { return checkChatModel(ctx, "model", cfg.Model) }},
		{"scribe", false, func(ctx context.Context) probe { return checkScribe(ctx, cfg) }},
		{"embeddings", false, func(ctx context.Context) probe { return checkEmbeddings(ctx, cfg.Recall.Embeddings) }},
		{"rerank", false, func(ctx context.Context) probe { return checkRerank(ctx, cfg.Recall.Rerank) }},
	}
	if platforms {
		checks = append(checks,
			named{"discord", true, func(ctx context.Context) probe { return checkDiscord(ctx, cfg.Discord) }},
			named{"telegram", true, func(ctx context.Context) probe { return checkTelegram(ctx, cfg.Telegram) }})
	}
	results := make([]probe, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.run(ctx)
		}()
	}
	wg.Wait()
	var fatal []string
	for i, c := range checks {
		p := results[i]
		if p.Status != statusFailed {
			continue
		}
		if c.main && p.Fatal {
			fatal = append(fatal, p.Detail)
			continue
		}
		log.Warn(c.name+" check failed at start; it is tried again when needed", "problem", p.Detail)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(fatal) > 0 {
		return startupError{msg: strings.Join(fatal, "\n  ")}
	}
	return nil
}

// apiCall sends one request to an OpenAI-compatible endpoint and returns
// the status and (at most 1 MiB of) the body. Its error never carries the
// key, nor the URL's user info.
func apiCall(ctx context.Context, method, endpoint, key string, body any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("bad URL")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, nil, fmt.Errorf("no answer within %s", probeTimeout)
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, nil
}

// host is the host of an endpoint, for messages.
func host(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return endpoint
}

func endpointURL(base, path string) string { return strings.TrimRight(base, "/") + "/" + path }

// refused is the message for a 401 or 403 of an endpoint configured under
// prefix (model, scribe, recall.embeddings …).
func refused(prefix, what string, status int, key, base string) string {
	if key == "" && prefix == "model" {
		return fmt.Sprintf("the %s API refused a request without a key (HTTP %d from %s): set model.api_key or OPENAI_API_KEY", what, status, host(base))
	}
	if key == "" {
		return fmt.Sprintf("the %s API refused a request without a key (HTTP %d from %s): set %s.api_key", what, status, host(base), prefix)
	}
	return fmt.Sprintf("the %s API refused the key (HTTP %d from %s): check %s.api_key", what, status, host(base), prefix)
}

// checkChatModel checks a chat endpoint: GET /models must list the model;
// where there is no list (404), or the model is not in it, a one-token chat
// call decides.
func checkChatModel(ctx context.Context, prefix string, m config.Model) probe {
	key := m.APIKey.Value()
	status, data, err := apiCall(ctx, http.MethodGet, endpointURL(m.BaseURL, "models"), key, nil)
	if err != nil {
		return failed(false, "cannot reach %s (%s.base_url): %v", host(m.BaseURL), prefix, err)
	}
	var listed []string
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failed(true, "%s", refused(prefix, "model", status, key, m.BaseURL))
	case status == http.StatusOK:
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal(data, &list) == nil {
			for _, d := range list.Data {
				if d.ID == m.Name {
					return ok("%s serves %s", host(m.BaseURL), m.Name)
				}
				listed = append(listed, d.ID)
			}
		}
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		// No model list here: ask for one token instead.
	default:
		return failed(false, "%s answered HTTP %d to GET /models", host(m.BaseURL), status)
	}
	return probeChat(ctx, prefix, m, key, listed)
}

// probeChat asks the model for one token.
func probeChat(ctx context.Context, prefix string, m config.Model, key string, listed []string) probe {
	body := map[string]any{"model": m.Name, "max_tokens": 1,
		"messages": []map[string]string{{"role": "user", "content": "ping"}}}
	status, data, err := apiCall(ctx, http.MethodPost, endpointURL(m.BaseURL, "chat/completions"), key, body)
	switch {
	case err != nil:
		return failed(false, "cannot reach %s (%s.base_url): %v", host(m.BaseURL), prefix, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failed(true, "%s", refused(prefix, "model", status, key, m.BaseURL))
	case status >= 200 && status < 300:
		if len(listed) > 0 {
			return ok("%s answers %s (not in its model list)", host(m.BaseURL), m.Name)
		}
		return ok("%s answers %s", host(m.BaseURL), m.Name)
	case status == http.StatusNotFound || (status == http.StatusBadRequest && modelProblem(data)):
		msg := fmt.Sprintf("%s.name %q is not a model %s serves", prefix, m.Name, host(m.BaseURL))
		if s := suggestion(m.Name, listed); s != "" {
			msg += s
		}
		return failed(true, "%s", msg)
	}
	return failed(false, "%s answered HTTP %d to a one-token call", host(m.BaseURL), status)
}

// modelProblem reports whether an error answer is about the model named.
func modelProblem(data []byte) bool {
	var e struct {
		Error struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	code, _ := e.Error.Code.(string)
	return code == "model_not_found" || strings.Contains(strings.ToLower(e.Error.Message), "model")
}

// checkScribe checks the scribe when it is not the main model.
func checkScribe(ctx context.Context, cfg config.Config) probe {
	s, m := cfg.ScribeModel(), cfg.Model
	if s.BaseURL == m.BaseURL && s.Name == m.Name && s.APIKey == m.APIKey {
		return skipped("the scribe is the main model")
	}
	return checkChatModel(ctx, "scribe", s)
}

// checkEmbeddings embeds one word.
func checkEmbeddings(ctx context.Context, e config.Embeddings) probe {
	if !e.On() {
		return skipped("recall.embeddings is not set")
	}
	body := map[string]any{"model": e.Model, "input": []string{"ping"}}
	return sideAnswer(ctx, "recall.embeddings", "embeddings", e.BaseURL, e.APIKey.Value(), e.Model, "embeddings", body)
}

// checkRerank ranks one document.
func checkRerank(ctx context.Context, r config.Rerank) probe {
	if !r.On() {
		return skipped("recall.rerank is not set")
	}
	body := map[string]any{"model": r.Model, "query": "ping", "documents": []string{"ping"}, "top_n": 1}
	return sideAnswer(ctx, "recall.rerank", "rerank", r.BaseURL, r.APIKey.Value(), r.Model, "rerank", body)
}

func sideAnswer(ctx context.Context, prefix, what, base, key, model, path string, body any) probe {
	status, data, err := apiCall(ctx, http.MethodPost, endpointURL(base, path), key, body)
	switch {
	case err != nil:
		return failed(false, "cannot reach %s (%s.base_url): %v", host(base), prefix, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failed(true, "%s", refused(prefix, what, status, key, base))
	case status >= 200 && status < 300:
		return ok("%s answers %s", host(base), model)
	case status == http.StatusNotFound || (status == http.StatusBadRequest && modelProblem(data)):
		return failed(true, "%s: %s answered HTTP %d: check %s.model %q and the base_url's path", prefix, host(base), status, prefix, model)
	}
	return failed(false, "%s answered HTTP %d", host(base), status)
}

// checkDiscord asks Discord who the bot is.
func checkDiscord(ctx context.Context, d config.Discord) probe {
	if d.Token == "" {
		return skipped("discord.token is not set")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	name, err := discord.CheckToken(ctx, d)
	switch {
	case errors.Is(err, discord.ErrTokenRefused):
		return failed(true, "Discord refused the bot token: check discord.token")
	case err != nil:
		return failed(false, "%v", err)
	}
	return ok("bot %s", name)
}

// checkTelegram asks Telegram who the bot is.
func checkTelegram(ctx context.Context, t config.Telegram) probe {
	if t.Token == "" {
		return skipped("telegram.token is not set")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	name, err := telegram.CheckToken(ctx, t)
	switch {
	case errors.Is(err, telegram.ErrUnauthorized):
		return failed(true, "Telegram refused the bot token: check telegram.token")
	case err != nil:
		return failed(false, "%v", err)
	}
	return ok("bot @%s", name)
}
