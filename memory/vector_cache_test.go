package memory_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// countingStore is the real store, counting the vector rows it hands out.
type countingStore struct {
	*models.Store
	mu   sync.Mutex
	rows int
}

func (c *countingStore) RecallVectors(ctx context.Context, q models.VectorScan) ([]models.RecallVector, error) {
	vs, err := c.Store.RecallVectors(ctx, q)
	c.mu.Lock()
	c.rows += len(vs)
	c.mu.Unlock()
	return vs, err
}

func (c *countingStore) took() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.rows
	c.rows = 0
	return n
}

const cacheSpace = "console:local:cache"

// seedVectors seeds n perceptions of character in a chat of its own and
// writes the first write of them a vector (the fake's hash vector of the
// item id, dim long); it returns the chat.
func seedVectors(t *testing.T, st *models.Store, character string, n, write, dim int) string {
	t.Helper()
	ctx := context.Background()
	chat := models.NewID()
	if err := st.SeedRecord(ctx, models.SeedSpec{SpaceID: cacheSpace, Character: character, ChatID: chat, N: n, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	writeVectors(t, st, chat, write, dim)
	return chat
}

func writeVectors(t testing.TB, st *models.Store, chat string, n, dim int) {
	t.Helper()
	ctx := context.Background()
	for n > 0 {
		items, err := st.PendingVectors(ctx, chat, "m", min(n, 2000))
		if err != nil || len(items) == 0 {
			t.Fatalf("pending: %d (%v)", len(items), err)
		}
		var rows []models.RecallVector
		for _, it := range items {
			v := openaitest.Embedding(it.ID, dim)
			rows = append(rows, models.RecallVector{ItemID: it.ID, SpaceID: it.SpaceID, Character: it.Character, Model: "m", Kind: it.Kind,
				ChatID: it.ChatID, Dims: dim, Vector: models.EncodeVector(v)})
		}
		if _, err := st.WriteVectors(ctx, rows); err != nil {
			t.Fatal(err)
		}
		n -= len(items)
	}
}

// The cache holds what its bound allows: the least recently used pair is
// evicted (and read again when asked for), a pair alone over the bound
// keeps its newest vectors, a fresh pair costs no rows, and new vectors
// are read alone. A character's search never sees another's vectors.
func TestVectorCacheStaysWithinItsBound(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			const dim, n = 64, 40
			for _, c := range []string{"Ana", "Bo", "Cy"} {
				seedVectors(t, st, c, n, n, dim)
			}
			perChar := int64(n * (4*dim + 26 + 80))
			cs := &countingStore{Store: st}
			cache := memory.NewVectorCache(cs, "m", perChar*2+perChar/2)
			q := openaitest.Embedding("query", dim)
			search := func(c string) {
				t.Helper()
				if _, err := cache.Nearest(ctx, cacheSpace, c, q, 5, -1); err != nil {
					t.Fatal(err)
				}
				if cache.Bytes() > cache.Limit() {
					t.Fatalf("the cache holds %d bytes, over its bound %d", cache.Bytes(), cache.Limit())
				}
			}
			search("Ana")
			search("Bo")
			if got := cs.took(); got != 2*n {
				t.Fatalf("loading two pairs read %d rows, want %d", got, 2*n)
			}
			search("Bo")
			if got := cs.took(); got != 0 {
				t.Errorf("a cached pair read %d rows again", got)
			}
			search("Cy") // evicts Ana, the least recently used
			search("Bo")
			if got := cs.took(); got != n {
				t.Errorf("loading Cy (Bo cached) read %d rows, want %d", got, n)
			}
			search("Ana")
			if got := cs.took(); got != n {
				t.Errorf("the evicted pair was read again with %d rows, want %d", got, n)
			}

			// One pair bigger than the bound keeps its newest vectors.
			small := memory.NewVectorCache(st, "m", perChar/4)
			all, err := small.Nearest(ctx, cacheSpace, "Ana", q, n, -1)
			if err != nil {
				t.Fatal(err)
			}
			if small.Bytes() > small.Limit() || len(all) == 0 || len(all) > n/4 {
				t.Errorf("an oversized pair: %d bytes (bound %d), %d vectors kept", small.Bytes(), small.Limit(), len(all))
			}

			// Searches of several characters at once, in a cache that
			// holds about one and a half of them, keep to the bound.
			busy := memory.NewVectorCache(st, "m", perChar+perChar/2)
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := busy.Nearest(ctx, cacheSpace, []string{"Ana", "Bo", "Cy"}[i%3], q, 5, -1); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if busy.Bytes() > busy.Limit() || busy.Bytes() <= 0 {
				t.Errorf("after concurrent searches the cache holds %d bytes (bound %d)", busy.Bytes(), busy.Limit())
			}

			// Isolation: Bo's own vector, searched by Ana, finds none of Bo's.
			bo, err := st.RecallVectors(ctx, models.VectorScan{SpaceID: cacheSpace, Character: "Bo", Model: "m", Limit: n})
			if err != nil || len(bo) != n {
				t.Fatalf("Bo's vectors: %d (%v)", len(bo), err)
			}
			boVec := models.DecodeVector(nil, bo[0].Vector)
			own, _ := cache.Nearest(ctx, cacheSpace, "Bo", boVec, 1, 0.99)
			if len(own) != 1 || own[0].ID != bo[0].ItemID {
				t.Fatalf("Bo's search for his own vector: %+v (the positive control)", own)
			}
			other, _ := cache.Nearest(ctx, cacheSpace, "Ana", boVec, n, -1)
			for _, r := range other {
				if slices.ContainsFunc(bo, func(v models.RecallVector) bool { return v.ItemID == r.ID }) {
					t.Fatalf("Ana's search returned Bo's item %s", r.ID)
				}
			}
		})
	}
}

// New vectors are read alone: a search after the job wrote more reads only
// those, and finds them.
func TestVectorCacheReadsOnlyNewVectors(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			chat := seedVectors(t, st, "Ana", 30, 10, 32)
			cs := &countingStore{Store: st}
			cache := memory.NewVectorCache(cs, "m", 1<<20)
			q := openaitest.Embedding("query", 32)
			first, err := cache.Nearest(ctx, cacheSpace, "Ana", q, 100, -1)
			if err != nil || len(first) != 10 || cs.took() != 10 {
				t.Fatalf("first search: %d items (%v)", len(first), err)
			}
			writeVectors(t, st, chat, 20, 32)
			second, err := cache.Nearest(ctx, cacheSpace, "Ana", q, 100, -1)
			if err != nil || len(second) != 30 {
				t.Fatalf("second search: %d items (%v), want 30", len(second), err)
			}
			if got := cs.took(); got != 20 {
				t.Errorf("the second search read %d rows, want the 20 new ones", got)
			}
			// Vectors of another length than the query's are not compared.
			if got, _ := cache.Nearest(ctx, cacheSpace, "Ana", openaitest.Embedding("q", 16), 100, -1); len(got) != 0 {
				t.Errorf("a 16-long query matched %d 32-long vectors", len(got))
			}
			cache.DropSpace(cacheSpace)
			if cache.Bytes() != 0 {
				t.Errorf("%d bytes after dropping the space", cache.Bytes())
			}
		})
	}
}
