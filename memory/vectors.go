package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"troupe/models"
	"troupe/recall"
	"troupe/text"
)

// Embedder turns texts into vectors, one per text in order (an
// OpenAI-compatible /embeddings endpoint).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reranker scores documents by their relevance to a query (a
// Jina/Cohere-style /rerank endpoint): one score per document, in order,
// higher is more relevant.
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Vectors is recall's third source of candidates: the items whose vectors
// are most similar to the new messages', searched in a VectorCache. Build
// it with NewVectors; a nil *Vectors finds nothing.
type Vectors struct {
	Embedder Embedder
	Cache    *VectorCache
	// Model names the vectors in the store (recall.embeddings.model).
	Model string
	// MinSimilarity leaves out items less similar than this, calibrated
	// (Calibrate).
	MinSimilarity float64
}

// DefaultMinSimilarity is the calibrated similarity below which an item is
// no candidate: with common embedding models, whose unrelated texts score
// around 0.1, it is a cosine of about 0.37; random vectors of 64 or more
// dimensions rarely reach it.
const DefaultMinSimilarity = 0.3

// Calibrate puts a cosine similarity on the scale of word relevance (0–1),
// against what the model gives any pair in this query: base, the query's
// mean similarity to all the character's vectors. What base gives
// everything says nothing, so the scale runs from base (0) to identity
// (1). Embedding models differ: unrelated texts score about 0.1 with
// some, 0.6 or more with others, and a raw cosine would let the latter
// bring every memory along as relevant. A base below 0 counts as 0, so
// calibrating never raises a similarity.
func Calibrate(sim, base float64) float64 {
	base = max(base, 0)
	if base >= 1 {
		return 0
	}
	return min(max((sim-base)/(1-base), 0), 1)
}

// NewVectors returns the vector source over store, its cache bounded by
// cacheBytes.
func NewVectors(e Embedder, store VectorStore, model string, cacheBytes int64) *Vectors {
	return &Vectors{Embedder: e, Cache: NewVectorCache(store, model, cacheBytes), Model: model, MinSimilarity: DefaultMinSimilarity}
}

// Similar embeds query (one /embeddings call, while the cache is brought up
// to date) and returns up to k of the character's items most similar to
// it, most similar first, with their similarity calibrated (Calibrate)
// as their relevance: those below MinSimilarity are left out. Only the
// character's own vectors are searched.
func (v *Vectors) Similar(ctx context.Context, space, character, query string, k int) ([]recall.Ranked, error) {
	type embedded struct {
		vec []float32
		err error
	}
	ch := make(chan embedded, 1)
	go func() {
		vs, err := v.Embedder.Embed(ctx, []string{text.CutRunes(query, maxEmbedRunes)})
		if err == nil && len(vs) != 1 {
			err = fmt.Errorf("memory: embeddings: %d vectors for 1 text", len(vs))
		}
		var vec []float32
		if err == nil {
			vec = vs[0]
		}
		ch <- embedded{vec, err}
	}()
	// The cache loads while the endpoint works; the search after it finds
	// the entry fresh, costing one probe.
	if err := v.Cache.Load(ctx, space, character); err != nil {
		return nil, err
	}
	var q embedded
	select {
	case q = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if q.err != nil {
		return nil, q.err
	}
	found, base, err := v.Cache.nearest(ctx, space, character, q.vec, k, -1)
	if err != nil {
		return nil, err
	}
	out := found[:0]
	for _, f := range found {
		if rel := Calibrate(f.Relevance, base); rel >= v.MinSimilarity {
			f.Relevance = rel
			out = append(out, f)
		}
	}
	return out, nil
}

// maxEmbedRunes bounds a text sent to be embedded; the models' input limits
// are a few thousand tokens.
const maxEmbedRunes = 4000

// sideBudget is the share of the time left for recall that the vector
// search and the rerank each get: past it they are skipped, and the turn
// keeps what cues and words found.
const sideBudget = 0.75

// sideContext derives the context a side call (embedding, rerank) runs
// under: sideBudget of the time ctx has left (5 s without a deadline).
func sideContext(ctx context.Context) (context.Context, context.CancelFunc) {
	left := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	return context.WithTimeout(ctx, time.Duration(float64(left)*sideBudget))
}

// vectorSearch is a similarity search running beside the index search.
type vectorSearch struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	found  []recall.Ranked
	err    error
}

// startVectors starts the turn's similarity search, if the source is set.
func (c RecallConfig) startVectors(ctx context.Context, in RecallInput, text string) *vectorSearch {
	if c.Vectors == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	vctx, cancel := sideContext(ctx)
	s := &vectorSearch{ctx: vctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.found, s.err = c.Vectors.Similar(vctx, in.SpaceID, in.Character, text, max(c.Candidates, 1))
	}()
	return s
}

// merge waits for the similarity search within its budget and adds what it
// found to ranked: an item found both ways keeps the higher relevance (the
// words' and the calibrated similarity, on one scale) and both sources. A search that failed or ran out of time adds nothing, and
// says why in skipped.
func (s *vectorSearch) merge(ranked []recall.Ranked, skipped *[]string) []recall.Ranked {
	if s == nil {
		return ranked
	}
	defer s.cancel()
	select {
	case <-s.done:
	case <-s.ctx.Done():
		*skipped = append(*skipped, "vector: "+s.ctx.Err().Error())
		return ranked
	}
	if s.err != nil {
		*skipped = append(*skipped, "vector: "+FaultOf(s.err).String())
		return ranked
	}
	at := make(map[string]int, len(ranked))
	for i, r := range ranked {
		at[r.ID] = i
	}
	for _, f := range s.found {
		if i, ok := at[f.ID]; ok {
			r := &ranked[i]
			r.Sources = append(append([]recall.Source(nil), r.Sources...), recall.Vector)
			r.Relevance = max(r.Relevance, f.Relevance)
			continue
		}
		ranked = append(ranked, f)
	}
	return ranked
}

// recheckVectors tells the cache which items its search found that the
// store did not give: a vector whose item was forgotten in another process
// stays in this process's cache until then. One query, only when such an
// item came up; a failure leaves the cache as it was (the items are left
// out all the same).
func (c RecallConfig) recheckVectors(ctx context.Context, in RecallInput, ranked []recall.Ranked, items models.RecallItems) {
	if c.Vectors == nil {
		return
	}
	loaded := make(map[string]bool, len(items.Items))
	for _, it := range items.Items {
		loaded[it.ID] = true
	}
	var missing []string
	for _, r := range ranked {
		if !loaded[r.ID] && slices.Contains(r.Sources, recall.Vector) {
			missing = append(missing, r.ID)
		}
	}
	_, _ = c.Vectors.Cache.Recheck(ctx, in.SpaceID, in.Character, missing)
}

// rerank re-orders the candidates by the rerank endpoint's scores, which
// become their relevance. A failure or a call past its budget leaves them
// as they were, and says why in skipped.
func (c RecallConfig) rerank(ctx context.Context, query string, cands []recall.Candidate, skipped *[]string) []recall.Candidate {
	if c.Rerank == nil || len(cands) < 2 {
		return cands
	}
	rctx, cancel := sideContext(ctx)
	defer cancel()
	docs := make([]string, len(cands))
	for i, cd := range cands {
		docs[i] = text.CutRunes(cd.Text, maxEmbedRunes)
	}
	scores, err := c.Rerank.Rerank(rctx, query, docs)
	if err == nil && len(scores) != len(cands) {
		err = fmt.Errorf("memory: rerank: %d scores for %d documents", len(scores), len(cands))
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil {
			err = context.DeadlineExceeded
		}
		*skipped = append(*skipped, "rerank: "+FaultOf(err).String())
		return cands
	}
	out := append([]recall.Candidate(nil), cands...)
	for i := range out {
		out[i].Relevance = min(max(scores[i], 0), 1)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Relevance > out[j].Relevance })
	return out
}
