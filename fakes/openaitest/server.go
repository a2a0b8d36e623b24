package openaitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// DefaultModel is the model id the server lists and reports when a request
// names none.
const DefaultModel = "openaitest-model"

// defaultDimension is the embedding length when none was set or asked for.
const defaultDimension = 64

// Server is a fake OpenAI-compatible API. Its methods are safe for concurrent
// use.
type Server struct {
	srv       *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu               sync.Mutex
	queue            []Answer
	responder        func(Request) Answer
	promptTokens     func(string) int
	completionTokens func(string) int
	dimension        int
	embedder         func(string, int) []float32
	reranker         func(query, doc string) float64
	embedFault       sideFault
	// fixedLength maps an embedding model ("" for every model) to the one
	// vector length it gives; such a model refuses "dimensions".
	fixedLength map[string]int
	rerankFault sideFault
	requests    []Request
	// seq counts every request, recorded or not.
	seq int
	// unrecorded stops keeping requests (SetRecording(false)).
	unrecorded bool
	access     access

	// caption says what an image part shows (SetCaption).
	caption func(Image) string
	// media holds the media endpoints' settings and scripts.
	media mediaState
}

// TB is the part of testing.TB the fake uses; declaring it here keeps the
// testing package out of binaries (troupe bench) that start the fake.
type TB interface {
	Helper()
	Cleanup(func())
}

// NewServer starts a fake server on loopback and closes it when the test
// ends.
func NewServer(t TB) *Server {
	t.Helper()
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake server on loopback outside a test (a benchmark
// command, a demo); the caller must Close it.
func Start() *Server {
	s := &Server{
		done:             make(chan struct{}),
		responder:        DefaultResponder,
		promptTokens:     CountTokens,
		completionTokens: CountTokens,
		dimension:        defaultDimension,
		embedder:         Embedding,
		reranker:         WordOverlap,
		caption:          Describe,
		media:            newMediaState(),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	mux.HandleFunc("POST /v1/rerank", s.handleRerank)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST "+TranscriptionsPath, s.handleTranscriptions)
	mux.HandleFunc("POST "+SpeechPath, s.handleSpeech)
	mux.HandleFunc("POST "+ImagesPath, s.handleImages)
	mux.HandleFunc("GET "+pictureFilesPath+"{name}", s.handlePictureFile)
	mux.HandleFunc("/", s.handleNotFound)
	s.srv = httptest.NewServer(s.gate(mux))
	return s
}

// URL returns the API base URL, ending in /v1, to hand to a client.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server: requests still hanging or waiting out a latency
// return at once, and later requests fail with connection refused. Close may
// be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Script queues answers for the next chat completion requests, consumed in
// order; once they run out the responder answers.
func (s *Server) Script(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, answers...)
}

// SetResponder sets the function that answers chat completion requests when
// no scripted answer is queued; nil restores DefaultResponder.
func (s *Server) SetResponder(f func(req Request) Answer) {
	if f == nil {
		f = DefaultResponder
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// SetPromptTokenCounter sets how prompt_tokens is computed from the request
// text (every message content joined by newlines, or every embedding input);
// nil restores CountTokens.
func (s *Server) SetPromptTokenCounter(f func(string) int) {
	if f == nil {
		f = CountTokens
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promptTokens = f
}

// SetCompletionTokenCounter sets how completion_tokens is computed from the
// answer text; nil restores CountTokens.
func (s *Server) SetCompletionTokenCounter(f func(string) int) {
	if f == nil {
		f = CountTokens
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completionTokens = f
}

// SetEmbeddingDimension sets the length of the vectors /v1/embeddings returns
// when a request does not ask for one; n <= 0 restores the default of 64.
func (s *Server) SetEmbeddingDimension(n int) {
	if n <= 0 {
		n = defaultDimension
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dimension = n
}

// SetRecording turns keeping requests on (the default) or off. A server
// that answers many requests, such as a load test's, turns it off so that
// memory does not grow with every request; Requests and Last then see only
// the requests kept while it was on, and Count still counts every request.
func (s *Server) SetRecording(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unrecorded = !on
}

// Requests returns a copy of every request recorded so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// Count returns how many requests, of any kind, the server has received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Last returns the most recent recorded request; ok is false when there was
// none.
func (s *Server) Last() (req Request, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1], true
}

// record numbers req, stores it unless recording is off, and returns the
// numbered copy.
func (s *Server) record(req Request) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.Seq = s.seq
	if !s.unrecorded {
		s.requests = append(s.requests, req)
	}
	return req
}

// next returns the answer to req: the first scripted one, else the
// responder's, which runs without the lock so it may call the server.
func (s *Server) next(req Request) Answer {
	s.mu.Lock()
	if len(s.queue) > 0 {
		a := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return a
	}
	f := s.responder
	s.mu.Unlock()
	return f(req)
}

// counters returns the current token counters.
func (s *Server) counters() (prompt, completion func(string) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.promptTokens, s.completionTokens
}

// wait blocks for d, or until the request or the server is done; it reports
// whether the full time passed. A negative d waits until done.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d == 0 {
		return true
	}
	var timeout <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-timeout:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}
