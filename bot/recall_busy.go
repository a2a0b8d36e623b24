package bot

import (
	"container/list"
	"errors"
	"sync"
	"sync/atomic"

	"troupe/recall"
)

// How a turn's recall went (TurnStats.Recall). While turns wait for a
// pipeline slot, recall gets cheaper rather than making every turn wait
// behind it: the search looks at fewer candidates, and a turn whose search
// is late, or that found searches already running for every slot twice
// over, loads again by id what its chat's last search ranked.
const (
	// RecallFull: the whole search, in time.
	RecallFull = "full"
	// RecallFewer: busy; the search ran with half the candidates.
	RecallFewer = "fewer"
	// RecallCached: busy, and the search was late or not started; the
	// chat's last ranking was loaded again.
	RecallCached = "cached"
	// RecallLate: busy, the search was late or not started, and nothing
	// was cached: no new block (the kept blocks still stand).
	RecallLate = "late"
	// RecallFailed: the search failed or ran past recall.timeout; no new
	// block.
	RecallFailed = "failed"
)

// errRecallLate: the turn stopped waiting for a search under load.
var errRecallLate = errors.New("recall: late under load")

// maxCachedRecalls bounds the rankings kept, one per chat and character.
const maxCachedRecalls = 4096

// recallCache keeps, per chat and character, the ids the last search
// ranked (no text: RecallAgain loads them with every check a search's load
// makes, so nothing forgotten since comes back), and counts the searches
// running.
type recallCache struct {
	mu      sync.Mutex
	entries map[string]*list.Element
	order   list.List // of cachedRanking, newest at the front
	running atomic.Int32
}

type cachedRanking struct {
	key    string
	ranked []recall.Ranked
}

func recallKey(chatID, character string) string { return chatID + "\x00" + character }

// put keeps ranked for key; an empty ranking keeps the one before.
func (c *recallCache) put(key string, ranked []recall.Ranked) {
	if len(ranked) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*list.Element{}
	}
	if e, ok := c.entries[key]; ok {
		e.Value = cachedRanking{key: key, ranked: ranked}
		c.order.MoveToFront(e)
		return
	}
	c.entries[key] = c.order.PushFront(cachedRanking{key: key, ranked: ranked})
	for c.order.Len() > maxCachedRecalls {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.entries, old.Value.(cachedRanking).key)
	}
}

// get returns the ranking kept for key; nil when none.
func (c *recallCache) get(key string) []recall.Ranked {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e.Value.(cachedRanking).ranked
	}
	return nil
}

// fewerCandidates is the candidates a search under load looks at: half,
// but at least twice what it picks.
func fewerCandidates(candidates, maxItems int) int {
	return min(candidates, max(candidates/2, 2*maxItems))
}
