package memory

import (
	"container/heap"
	"container/list"
	"context"
	"math"
	"sync"

	"troupe/models"
	"troupe/recall"
)

// VectorStore is what the vector cache reads; *models.Store satisfies it.
type VectorStore interface {
	RecallVectors(ctx context.Context, q models.VectorScan) ([]models.RecallVector, error)
	// VectorsKept returns which of ids still have a vector of model.
	VectorsKept(ctx context.Context, model string, ids []string) ([]string, error)
}

// VectorCache keeps the item vectors of (character, space) pairs in
// process, so that a turn's similarity search reads no vectors from the
// database: an entry is loaded once, and each search first reads only the
// vectors written since (one index probe when there are none). Entries are
// evicted least recently used first to stay within a byte bound; a pair
// whose vectors alone exceed the bound keeps its newest ones. Its methods
// are safe for concurrent use.
type VectorCache struct {
	store VectorStore
	model string
	limit int64

	mu      sync.Mutex
	used    int64
	lru     *list.List // of *vecEntry, most recently used first
	entries map[vecKey]*vecEntry
}

type vecKey struct{ space, character string }

// vecEntry is one pair's vectors, unit length, oldest first.
type vecEntry struct {
	key  vecKey
	elem *list.Element

	// mu serializes the entry's refresh and search.
	mu      sync.Mutex
	scanned int64 // the largest vector id read
	ids     []string
	kinds   []recall.Kind
	vecs    [][]float32
	// bytes is what the entry holds; gone marks an evicted entry, whose
	// bytes no longer count. Both are the cache's (under VectorCache.mu).
	bytes int64
	gone  bool
}

// vecOverhead approximates what a cached vector costs besides its values:
// its id, slice headers and kind.
const vecOverhead = 80

// vecScanBatch is how many vectors one read of a refresh takes.
const vecScanBatch = 4000

// NewVectorCache returns a cache of model's vectors from store within
// limitBytes.
func NewVectorCache(store VectorStore, model string, limitBytes int64) *VectorCache {
	return &VectorCache{store: store, model: model, limit: max(limitBytes, 1), lru: list.New(), entries: map[vecKey]*vecEntry{}}
}

// Bytes reports what the cache holds now.
func (c *VectorCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Limit is the cache's byte bound.
func (c *VectorCache) Limit() int64 { return c.limit }

// DropSpace forgets every cached pair of a space (after a /forget in this
// process: the next search loads what is left).
func (c *VectorCache) DropSpace(space string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if k.space == space {
			c.evictLocked(e)
		}
	}
}

// Recheck is told the items of a pair that a search found but the store
// no longer gave (gone, or of another branch of the asking chat). When one
// of them has lost its vector — forgotten, perhaps by another process,
// whose DropSpace cannot reach this cache — the pair is dropped, and the
// next search loads only the vectors that are left. It reports whether it
// dropped the pair.
func (c *VectorCache) Recheck(ctx context.Context, space, character string, ids []string) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	kept, err := c.store.VectorsKept(ctx, c.model, ids)
	if err != nil {
		return false, err
	}
	if len(kept) >= len(ids) {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[vecKey{space, character}]; e != nil {
		c.evictLocked(e)
	}
	return true, nil
}

// entry returns the pair's entry, made the most recently used.
func (c *VectorCache) entry(space, character string) *vecEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := vecKey{space, character}
	e := c.entries[k]
	if e == nil {
		e = &vecEntry{key: k}
		e.elem = c.lru.PushFront(e)
		c.entries[k] = e
	} else {
		c.lru.MoveToFront(e.elem)
	}
	return e
}

func (c *VectorCache) evictLocked(e *vecEntry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.key)
	c.used -= e.bytes
	e.gone = true
}

// grow accounts delta more bytes to e and evicts the least recently used
// other entries until the cache is within its bound; it returns how many
// bytes e itself must shed (its oldest vectors) when it alone is too big.
// Every change of an entry's bytes goes through here, under the lock.
func (c *VectorCache) grow(e *vecEntry, delta int64) (over int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.bytes += delta
	if e.gone {
		// Evicted while it loaded: it lives on for this search only.
		return max(e.bytes-c.limit, 0)
	}
	c.used += delta
	// Least recently used first, passing over e itself: a pair loading
	// while a newer one was searched may be the oldest.
	for el := c.lru.Back(); el != nil && c.used > c.limit; {
		prev := el.Prev()
		if v := el.Value.(*vecEntry); v != e {
			c.evictLocked(v)
		}
		el = prev
	}
	return max(c.used-c.limit, 0)
}

// refresh reads the pair's vectors written since its last look. A context
// done in the middle keeps what was read; the next search goes on from
// there.
func (c *VectorCache) refresh(ctx context.Context, e *vecEntry) error {
	for {
		rows, err := c.store.RecallVectors(ctx, models.VectorScan{SpaceID: e.key.space, Character: e.key.character, Model: c.model,
			AfterID: e.scanned, Limit: vecScanBatch})
		if err != nil {
			return err
		}
		var delta int64
		for _, r := range rows {
			e.scanned = max(e.scanned, r.ID)
			v := unit(models.DecodeVector(nil, r.Vector))
			if v == nil {
				continue
			}
			kind := recall.Perception
			if r.Kind == models.RecallBelief {
				kind = recall.Belief
			}
			e.ids, e.kinds, e.vecs = append(e.ids, r.ItemID), append(e.kinds, kind), append(e.vecs, v)
			delta += vecBytes(r.ItemID, v)
		}
		if over := c.grow(e, delta); over > 0 {
			c.shed(e, over)
		}
		if len(rows) < vecScanBatch {
			return nil
		}
	}
}

// shed drops e's oldest vectors worth at least over bytes.
func (c *VectorCache) shed(e *vecEntry, over int64) {
	var freed int64
	n := 0
	for n < len(e.ids) && freed < over {
		freed += vecBytes(e.ids[n], e.vecs[n])
		n++
	}
	e.ids, e.kinds, e.vecs = append([]string(nil), e.ids[n:]...), append([]recall.Kind(nil), e.kinds[n:]...), append([][]float32(nil), e.vecs[n:]...)
	c.grow(e, -freed)
}

func vecBytes(id string, v []float32) int64 { return int64(4*len(v) + len(id) + vecOverhead) }

// Load brings the pair's cached vectors up to date.
func (c *VectorCache) Load(ctx context.Context, space, character string) error {
	e := c.entry(space, character)
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.refresh(ctx, e)
}

// Nearest returns up to k of the character's items most similar to query
// (cosine similarity of at least minSim), most similar first, after
// bringing the pair's cached vectors up to date. Vectors of another length
// than the query's are not compared.
func (c *VectorCache) Nearest(ctx context.Context, space, character string, query []float32, k int, minSim float64) ([]recall.Ranked, error) {
	found, _, err := c.nearest(ctx, space, character, query, k, minSim)
	return found, err
}

// nearest is Nearest that also returns the mean similarity of query to
// all the character's vectors it compared: what the model gives any pair
// of this character's memories for this query (see Vectors.Similar).
func (c *VectorCache) nearest(ctx context.Context, space, character string, query []float32, k int, minSim float64) ([]recall.Ranked, float64, error) {
	q := unit(append([]float32(nil), query...))
	if q == nil || k <= 0 {
		return nil, 0, nil
	}
	e := c.entry(space, character)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := c.refresh(ctx, e); err != nil {
		return nil, 0, err
	}
	h := make(simHeap, 0, k)
	var sum float64
	n := 0
	for i, v := range e.vecs {
		if len(v) != len(q) {
			continue
		}
		s := dot(q, v)
		sum += float64(s)
		n++
		if float64(s) < minSim {
			continue
		}
		if len(h) < k {
			heap.Push(&h, simHit{i, s})
		} else if s > h[0].sim {
			h[0] = simHit{i, s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]recall.Ranked, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		hit := heap.Pop(&h).(simHit)
		out[i] = recall.Ranked{ID: e.ids[hit.i], Kind: e.kinds[hit.i], Relevance: float64(hit.sim), Sources: []recall.Source{recall.Vector}}
	}
	mean := 0.0
	if n > 0 {
		mean = sum / float64(n)
	}
	return out, mean, nil
}

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	b = b[:len(a)]
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// unit scales v to length 1 in place; nil for an empty or zero vector.
func unit(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil
	}
	s := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= s
	}
	return v
}

type simHit struct {
	i   int
	sim float32
}

// simHeap is a min-heap of hits: the least similar of the best k on top.
type simHeap []simHit

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h simHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)        { *h = append(*h, x.(simHit)) }
func (h *simHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
