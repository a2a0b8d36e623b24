package openaitest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode"
)

// rerankRequestBody is a Jina/Cohere-style /rerank request.
type rerankRequestBody struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type rerankResult struct {
	Index          int     `json:"index"`
	RelevanceScore float64 `json:"relevance_score"`
}

// sideFaults are what SetEmbeddingFault and SetRerankFault set for the
// endpoints that answer no chat: a latency (negative: until the request
// is cancelled) and an HTTP status to fail with (0: answer).
type sideFault struct {
	latency time.Duration
	status  int
}

// SetEmbedder sets how /v1/embeddings turns one input into a vector of
// length dim; nil restores Embedding (a hash: equal inputs, equal vectors,
// and nothing else alike). A test gives texts that share no word similar
// vectors this way.
func (s *Server) SetEmbedder(f func(input string, dim int) []float32) {
	if f == nil {
		f = Embedding
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedder = f
}

// SetEmbeddingFault makes /v1/embeddings wait latency before answering (a
// negative latency: until the request is cancelled) and then fail with
// status, or answer when status is 0.
func (s *Server) SetEmbeddingFault(latency time.Duration, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFault = sideFault{latency, status}
}

// SetRerankFault is SetEmbeddingFault for /v1/rerank.
func (s *Server) SetRerankFault(latency time.Duration, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rerankFault = sideFault{latency, status}
}

// SetReranker sets how /v1/rerank scores each document against the query
// (0–1); nil restores WordOverlap.
func (s *Server) SetReranker(f func(query, doc string) float64) {
	if f == nil {
		f = WordOverlap
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reranker = f
}

// fault waits out f's latency and, when it fails, writes its status; it
// reports whether the handler should go on answering.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, f sideFault) bool {
	if f.latency != 0 && !s.wait(r.Context(), f.latency) {
		return false
	}
	if f.status != 0 {
		writeError(w, f.status, -1, "injected failure")
		return false
	}
	return true
}

// WordOverlap is the default rerank score: the share of the query's words
// (lower-cased letters and digits) that the document contains.
func WordOverlap(query, doc string) float64 {
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			m[w] = true
		}
		return m
	}
	q, d := words(query), words(doc)
	if len(q) == 0 {
		return 0
	}
	n := 0
	for w := range q {
		if d[w] {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

// handleRerank serves POST /v1/rerank: every document scored by the
// reranker, best first, the top_n of them (all when top_n is 0).
func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request) {
	req := newRequest(r)
	var body rerankRequestBody
	err := json.NewDecoder(r.Body).Decode(&body)
	req.Model, req.Input = body.Model, append([]string{body.Query}, body.Documents...)
	s.record(req)
	if !s.authorized(w, r) {
		return
	}
	if err != nil || body.Query == "" || len(body.Documents) == 0 {
		writeError(w, http.StatusBadRequest, -1, "'query' and 'documents' are required.")
		return
	}
	s.mu.Lock()
	score, f := s.reranker, s.rerankFault
	s.mu.Unlock()
	if !s.fault(w, r, f) {
		return
	}
	res := make([]rerankResult, len(body.Documents))
	for i, d := range body.Documents {
		res[i] = rerankResult{Index: i, RelevanceScore: score(body.Query, d)}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].RelevanceScore > res[j].RelevanceScore })
	if body.TopN > 0 && body.TopN < len(res) {
		res = res[:body.TopN]
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": body.Model, "results": res})
}
