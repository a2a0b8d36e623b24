package memory_test

import (
	"context"
	"slices"
	"testing"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// A cache learns of vectors deleted behind its back (a /forget in another
// process) when told of items its search found and the store no longer
// gave: items that kept their vectors (another branch's) change nothing;
// one that lost its vector drops the pair, and the next search reloads
// only what is left.
func TestVectorCacheRecheckDropsVectorsGoneElsewhere(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			gone := seedVectors(t, st, "Ana", 10, 10, 32)
			kept := seedVectors(t, st, "Ana", 10, 10, 32)
			idsOf := func(chat string) []string {
				var ids []string
				if err := st.DB().Model(&models.RecallVector{}).Where("chat_id = ?", chat).Pluck("item_id", &ids).Error; err != nil {
					t.Fatal(err)
				}
				return ids
			}
			goneIDs, keptIDs := idsOf(gone), idsOf(kept)
			cs := &countingStore{Store: st}
			cache := memory.NewVectorCache(cs, "m", 1<<20)
			q := openaitest.Embedding("query", 32)
			found := func() []string {
				t.Helper()
				rs, err := cache.Nearest(ctx, cacheSpace, "Ana", q, 100, -1)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]string, len(rs))
				for i, r := range rs {
					out[i] = r.ID
				}
				return out
			}
			if got := found(); len(got) != 20 || cs.took() != 20 {
				t.Fatalf("first search: %d items", len(got))
			}
			if dropped, err := cache.Recheck(ctx, cacheSpace, "Ana", keptIDs[:3]); err != nil || dropped {
				t.Fatalf("items with their vectors: dropped %v (%v)", dropped, err)
			}
			if got := found(); len(got) != 20 || cs.took() != 0 {
				t.Errorf("after a recheck that found all kept: %d items, %d rows read", len(got), cs.took())
			}

			// Another process forgets the first chat: its vectors go, and
			// this cache, not told, still finds them.
			if err := st.DB().Where("chat_id = ?", gone).Delete(&models.RecallVector{}).Error; err != nil {
				t.Fatal(err)
			}
			if got := found(); !slices.Contains(got, goneIDs[0]) {
				t.Fatalf("the stale cache lost the vectors untold (the control): %v", got)
			}
			if dropped, err := cache.Recheck(ctx, cacheSpace, "Ana", append([]string{keptIDs[0]}, goneIDs[:1]...)); err != nil || !dropped {
				t.Fatalf("an item without its vector: dropped %v (%v)", dropped, err)
			}
			if cache.Bytes() != 0 {
				t.Errorf("%d bytes held after the pair was dropped", cache.Bytes())
			}
			got := found()
			if len(got) != 10 || cs.took() != 10 {
				t.Errorf("after the drop: %d items found, want the 10 kept, reloaded", len(got))
			}
			for _, id := range goneIDs {
				if slices.Contains(got, id) {
					t.Errorf("a forgotten item %s is still found", id)
				}
			}
		})
	}
}
