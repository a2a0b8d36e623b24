package openaitest_test

import (
	"testing"

	oai "github.com/sashabaranov/go-openai"

	"troupe/fakes/openaitest"
)

func TestStartAndSetRecording(t *testing.T) {
	t.Parallel()
	s := openaitest.Start()
	defer s.Close()
	c := client(s)
	ask := func(text string) {
		t.Helper()
		_, err := c.CreateChatCompletion(t.Context(), oai.ChatCompletionRequest{
			Model:    "m",
			Messages: []oai.ChatCompletionMessage{{Role: "user", Content: text}},
		})
		if err != nil {
			t.Fatalf("CreateChatCompletion: %v", err)
		}
	}
	ask("kept")
	s.SetRecording(false)
	ask("not kept")
	ask("not kept either")
	s.SetRecording(true)
	ask("kept again")
	if got := s.Count(); got != 4 {
		t.Errorf("got Count %d, want 4 (every request counts)", got)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d recorded requests, want 2", len(reqs))
	}
	if reqs[0].Messages[0].Content != "kept" || reqs[1].Messages[0].Content != "kept again" {
		t.Errorf("got recorded %q and %q", reqs[0].Messages[0].Content, reqs[1].Messages[0].Content)
	}
	if reqs[1].Seq != 4 {
		t.Errorf("got Seq %d for the fourth request, want 4", reqs[1].Seq)
	}
	if last, ok := s.Last(); !ok || last.Seq != 4 {
		t.Errorf("got Last %+v, %v; want the fourth request", last, ok)
	}
}

func TestStartClose(t *testing.T) {
	t.Parallel()
	s := openaitest.Start()
	s.Close()
	s.Close() // a second Close is harmless
	if _, err := client(s).ListModels(t.Context()); err == nil {
		t.Error("got an answer after Close, want a connection error")
	}
}
