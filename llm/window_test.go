package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/memory"
)

// A model list that reports the window gives it (vLLM's and OpenRouter's
// names); one that does not, or no list at all, gives 0.
func TestReportedWindow(t *testing.T) {
	srv := openaitest.NewServer(t)
	srv.SetModels("test-model", "other-model")
	c := newClient(t, srv.URL(), nil)
	ctx := context.Background()
	if w, err := c.ReportedWindow(ctx); err != nil || w != 0 {
		t.Errorf("no window set: %d, %v; want 0, nil", w, err)
	}
	srv.SetContextWindow(8192, true)
	if w, err := c.ReportedWindow(ctx); err != nil || w != 8192 {
		t.Errorf("reported window: %d, %v; want 8192", w, err)
	}
	srv.SetContextWindow(8192, false)
	if w, err := c.ReportedWindow(ctx); err != nil || w != 0 {
		t.Errorf("unreported window: %d, %v; want 0, nil", w, err)
	}
	srv.HideModelList(true)
	if w, err := c.ReportedWindow(ctx); err == nil || w != 0 {
		t.Errorf("no model list: %d, %v; want 0 and an error", w, err)
	}
}

// A prompt over the window is refused with code context_length_exceeded:
// the client's error has the kind memory halves its batch on, and the
// call is not retried.
func TestContextLengthRefusal(t *testing.T) {
	srv := openaitest.NewServer(t)
	srv.SetContextWindow(50, false)
	c := newClient(t, srv.URL(), nil)
	long := bot.ModelRequest{Messages: []bot.PromptMessage{{Role: bot.RoleUser, Content: strings.Repeat("word ", 400)}}}
	_, err := c.Complete(context.Background(), long)
	var me *bot.ModelError
	if !errors.As(err, &me) || me.Kind != memory.FaultTooLong || me.StatusCode != 400 || !memory.IsTooLong(err) {
		t.Fatalf("err = %v, want a context_length ModelError of HTTP 400", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a refusal for length was retried", n)
	}
	short := bot.ModelRequest{Messages: []bot.PromptMessage{{Role: bot.RoleUser, Content: "hi"}}}
	if _, err := c.Complete(context.Background(), short); err != nil {
		t.Errorf("a short prompt: %v", err)
	}
}
