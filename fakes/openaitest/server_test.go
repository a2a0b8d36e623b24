package openaitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	oai "github.com/sashabaranov/go-openai"

	"troupe/fakes/openaitest"
)

func client(s *openaitest.Server) *oai.Client {
	cfg := oai.DefaultConfig("sk-test")
	cfg.BaseURL = s.URL()
	return oai.NewClientWithConfig(cfg)
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setDim  int
		ask     int
		format  oai.EmbeddingEncodingFormat
		wantDim int
	}{
		{"default", 0, 0, "", 64},
		{"set dimension", 16, 0, "", 16},
		{"asked dimension", 16, 8, "", 8},
		{"base64", 0, 0, oai.EmbeddingEncodingFormatBase64, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.SetEmbeddingDimension(tt.setDim)
			resp, err := client(s).CreateEmbeddings(t.Context(), oai.EmbeddingRequest{
				Input:          []string{"a fox", "a dog", "a fox"},
				Model:          oai.SmallEmbedding3,
				Dimensions:     tt.ask,
				EncodingFormat: tt.format,
			})
			if err != nil {
				t.Fatalf("CreateEmbeddings: %v", err)
			}
			if len(resp.Data) != 3 {
				t.Fatalf("got %d embeddings, want 3", len(resp.Data))
			}
			for i, d := range resp.Data {
				if len(d.Embedding) != tt.wantDim {
					t.Errorf("embedding %d: got dimension %d, want %d", i, len(d.Embedding), tt.wantDim)
				}
				var norm float64
				for _, v := range d.Embedding {
					norm += float64(v) * float64(v)
				}
				if math.Abs(norm-1) > 1e-4 {
					t.Errorf("embedding %d: got squared norm %v, want 1", i, norm)
				}
			}
			if fmt.Sprint(resp.Data[0].Embedding) != fmt.Sprint(resp.Data[2].Embedding) {
				t.Error("got different vectors for equal inputs")
			}
			if fmt.Sprint(resp.Data[0].Embedding) == fmt.Sprint(resp.Data[1].Embedding) {
				t.Error("got equal vectors for different inputs")
			}
			if want := openaitest.Embedding("a dog", tt.wantDim); fmt.Sprint(resp.Data[1].Embedding) != fmt.Sprint(want) {
				t.Errorf("got %v, want Embedding's %v", resp.Data[1].Embedding, want)
			}
			if got, _ := s.Last(); strings.Join(got.Input, "|") != "a fox|a dog|a fox" {
				t.Errorf("got recorded input %q", got.Input)
			}
		})
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	list, err := client(s).ListModels(t.Context())
	if err != nil {
		t.Fatalf("ListModels: %v", err)
	}
	if len(list.Models) != 2 || list.Models[0].ID != openaitest.DefaultModel || list.Models[1].ID != openaitest.TroupeDefaultModel {
		t.Errorf("got models %+v, want %q and %q", list.Models, openaitest.DefaultModel, openaitest.TroupeDefaultModel)
	}
}

func TestScriptThenResponder(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Text: "first"}, openaitest.Answer{Text: "second"})
	c := client(s)
	ask := func(text string) string {
		t.Helper()
		resp, err := c.CreateChatCompletion(t.Context(), oai.ChatCompletionRequest{
			Model:    "m",
			Messages: []oai.ChatCompletionMessage{{Role: "user", Content: text}},
		})
		if err != nil {
			t.Fatalf("CreateChatCompletion: %v", err)
		}
		return resp.Choices[0].Message.Content
	}
	want := []string{"first", "second", `reply 3: You said "hello there". I'm only the openaitest model, but I'm listening.`, "custom 4"}
	got := []string{ask("x"), ask("y"), ask("  hello\n there ")}
	s.SetResponder(func(req openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Text: fmt.Sprintf("custom %d", req.Seq)}
	})
	got = append(got, ask("z"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Script(openaitest.Answer{Text: "abcdefghij", ChunkSize: 4})
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("got content type %q, want text/event-stream", ct)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	var events []string
	for _, block := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		events = append(events, strings.TrimPrefix(block, "data: "))
	}
	if len(events) != 7 {
		t.Fatalf("got %d events, want 7 (role, 3 text, finish, usage, done):\n%s", len(events), raw)
	}
	if events[6] != "[DONE]" {
		t.Errorf("got last event %q, want [DONE]", events[6])
	}
	var usage struct {
		Object  string `json:"object"`
		Choices []any  `json:"choices"`
		Usage   struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(events[5]), &usage); err != nil {
		t.Fatalf("usage chunk: %v", err)
	}
	if usage.Object != "chat.completion.chunk" || len(usage.Choices) != 0 ||
		usage.Usage.PromptTokens != openaitest.CountTokens("hi") || usage.Usage.CompletionTokens != openaitest.CountTokens("abcdefghij") {
		t.Errorf("got usage chunk %s", events[5])
	}
	if !strings.Contains(events[1], `"usage":null`) || !strings.Contains(events[1], `"content":"abcd"`) {
		t.Errorf("got text chunk %s, want content abcd and usage null", events[1])
	}
	if got, _ := s.Last(); len(got.Messages) != 1 || got.Messages[0].Content != "hi" || got.HasAuthorization {
		t.Errorf("got recorded request %+v", got)
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	c := client(s)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			stream, err := c.CreateChatCompletionStream(t.Context(), oai.ChatCompletionRequest{
				Model:    "m",
				Messages: []oai.ChatCompletionMessage{{Role: "user", Content: fmt.Sprint("hi ", i)}},
			})
			if err != nil {
				t.Errorf("stream %d: %v", i, err)
				return
			}
			defer stream.Close()
			for {
				if _, err := stream.Recv(); err != nil {
					return
				}
			}
		})
		_ = s.Requests()
	}
	wg.Wait()
	if got := s.Count(); got != 10 {
		t.Errorf("got %d requests, want 10", got)
	}
	seen := map[int]bool{}
	for _, r := range s.Requests() {
		seen[r.Seq] = true
	}
	if len(seen) != 10 {
		t.Errorf("got %d distinct sequence numbers, want 10", len(seen))
	}
}

func TestUnknownPath(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	resp, err := http.Get(s.URL() + "/nope")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("got status %d, want 404", resp.StatusCode)
	}
}

// A model switched to a fixed length answers a request carrying
// "dimensions" with OpenAI's own 400 body (message, invalid_request_error,
// param and code null) and a request without it with vectors of its
// length; other models still take "dimensions", a server-wide switch
// covers them, and n <= 0 lifts a switch.
func TestFixedLengthModelRefusesDimensions(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.SetFixedLength("ada", 24)
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(s.URL()+"/embeddings", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("read body: %v", err)
		}
		return resp.StatusCode, string(raw)
	}
	code, body := post(`{"model":"ada","input":"a fox","dimensions":8}`)
	var refusal struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &refusal); err != nil {
		t.Fatalf("refusal body %q: %v", body, err)
	}
	e := refusal.Error
	if code != http.StatusBadRequest || e["message"] != openaitest.RefuseDimensions || e["type"] != "invalid_request_error" ||
		e["param"] != nil || e["code"] != nil || len(e) != 4 {
		t.Errorf("got %d %s, want 400 with OpenAI's refusal", code, body)
	}
	if got, _ := s.Last(); got.Dimensions != 8 || got.Model != "ada" {
		t.Errorf("recorded %+v, want model ada asking 8", got)
	}

	length := func(model string, ask int) int {
		t.Helper()
		resp, err := client(s).CreateEmbeddings(t.Context(), oai.EmbeddingRequest{Input: []string{"a fox"}, Model: oai.EmbeddingModel(model), Dimensions: ask})
		if err != nil {
			t.Fatalf("%s asking %d: %v", model, ask, err)
		}
		if want := openaitest.Embedding("a fox", len(resp.Data[0].Embedding)); fmt.Sprint(resp.Data[0].Embedding) != fmt.Sprint(want) {
			t.Errorf("%s: not the Embedding of its length", model)
		}
		return len(resp.Data[0].Embedding)
	}
	if n := length("ada", 0); n != 24 {
		t.Errorf("ada without dimensions: %d long, want its 24", n)
	}
	if got, _ := s.Last(); got.Dimensions != 0 {
		t.Errorf("recorded dimensions %d, want 0 when absent", got.Dimensions)
	}
	if n := length("small", 8); n != 8 {
		t.Errorf("another model asked for 8: %d long", n)
	}
	s.SetFixedLength("", 12)
	if n := length("small", 0); n != 12 {
		t.Errorf("server-wide fixed length: %d long, want 12", n)
	}
	if n := length("ada", 0); n != 24 {
		t.Errorf("ada's own switch under a server-wide one: %d long, want 24", n)
	}
	if code, _ := post(`{"model":"small","input":"a fox","dimensions":8}`); code != http.StatusBadRequest {
		t.Errorf("server-wide switch, dimensions asked: status %d, want 400", code)
	}
	s.SetFixedLength("", 0)
	s.SetFixedLength("ada", 0)
	if n := length("ada", 8); n != 8 {
		t.Errorf("after lifting the switch ada asked for 8: %d long", n)
	}
}
