package models

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
)

// recallCountsEvery is how often the counts of recalled items are written.
// A count is a soft signal for recall's scoring: a second late, or lost in
// a crash, changes no answer.
const recallCountsEvery = time.Second

// recallCountsMax is how many distinct items may wait before a write is
// started early.
const recallCountsMax = 4096

// recallCounts gathers how often each item was recalled, so that the turns
// of a hundred busy channels, which recall the same few items of a card,
// do not each update those rows. Written one turn at a time, the updates
// queued on each other's row locks and on the recorder's and reflection's
// (troupe bench, PostgreSQL, 100 channels: a mean of 0.2–4.5 s per update),
// holding a pooled connection each while the turns waited for one.
type recallCounts struct {
	mu          sync.Mutex
	perceptions map[string]int
	beliefs     map[string]int
	start       sync.Once
	kick        chan struct{}
	stop        chan struct{}
	stopped     chan struct{}
	closing     sync.Once
	// flushMu makes the writes one at a time (the flusher's and Flush's).
	flushMu sync.Mutex
}

func newRecallCounts() *recallCounts {
	return &recallCounts{perceptions: map[string]int{}, beliefs: map[string]int{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
}

// countRecalls counts one recall of each item and starts the writer if needed.
func (s *Store) countRecalls(perceptions, beliefs []string) {
	c := s.recalls
	c.mu.Lock()
	for _, id := range perceptions {
		c.perceptions[id]++
	}
	for _, id := range beliefs {
		c.beliefs[id]++
	}
	full := len(c.perceptions)+len(c.beliefs) >= recallCountsMax
	c.mu.Unlock()
	c.start.Do(func() { go s.writeRecallCounts() })
	if full {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// writeRecallCounts writes the gathered counts every recallCountsEvery
// until the store closes.
func (s *Store) writeRecallCounts() {
	c := s.recalls
	defer close(c.stopped)
	t := time.NewTicker(recallCountsEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		case <-c.kick:
		}
		ctx, cancel := context.WithTimeout(Background(context.Background()), 30*time.Second)
		if err := s.FlushRecallCounts(ctx); err != nil {
			s.log.Warn("write recall counts", "err", err)
		}
		cancel()
	}
}

// FlushRecallCounts writes the recall counts gathered so far. The store
// writes them every second and when it closes; tests and tools that read
// the counts call it first. Counts that fail to write are kept for the
// next try.
func (s *Store) FlushRecallCounts(ctx context.Context) error {
	c := s.recalls
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	ps, bs := c.perceptions, c.beliefs
	if len(ps)+len(bs) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.perceptions, c.beliefs = map[string]int{}, map[string]int{}
	c.mu.Unlock()
	var busyP, busyB map[string]int
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if busyP, err = s.addRecallCounts(tx, "perceptions", ps); err != nil {
			return err
		}
		busyB, err = s.addRecallCounts(tx, "beliefs", bs)
		return err
	})
	if err != nil {
		// Nothing was written: every count waits for the next write.
		busyP, busyB = ps, bs
	}
	// Rows a memory install holds wait for the next write too.
	c.keep(busyP, busyB)
	if err != nil {
		return fmt.Errorf("models: write recall counts: %w", err)
	}
	return nil
}

// keep gathers counts again, for the next write.
func (c *recallCounts) keep(ps, bs map[string]int) {
	if len(ps)+len(bs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, n := range ps {
		c.perceptions[id] += n
	}
	for id, n := range bs {
		c.beliefs[id] += n
	}
}

// addRecallCounts adds counts to the rows of table: one statement
// per distinct count, its ids in order, so that two writers take their row
// locks in the same order. On PostgreSQL it first locks the rows no other
// transaction holds, and returns the counts of the others (busy), to be
// added later: a reflection install locks beliefs and then perceptions,
// the other way round, and the two deadlocked (troupe bench --latency 2s,
// a second lost to PostgreSQL's deadlock_timeout).
func (s *Store) addRecallCounts(tx *gorm.DB, table string, counts map[string]int) (busy map[string]int, err error) {
	if s.dialect == "postgres" && len(counts) > 0 {
		ids := slices.Sorted(maps.Keys(counts))
		var free []string
		if err := tx.Raw("SELECT id FROM "+table+" WHERE id = ANY(CAST(? AS text[])) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED",
			textArray(ids)).Scan(&free).Error; err != nil {
			return nil, err
		}
		if len(free) < len(ids) {
			busy = maps.Clone(counts)
			counts = make(map[string]int, len(free))
			for _, id := range free {
				counts[id] = busy[id]
				delete(busy, id)
			}
			// Rows gone meanwhile are busy no more: their counts go.
			var still []string
			if err := tx.Raw("SELECT id FROM "+table+" WHERE id = ANY(CAST(? AS text[]))", textArray(slices.Sorted(maps.Keys(busy)))).Scan(&still).Error; err != nil {
				return nil, err
			}
			left := make(map[string]int, len(still))
			for _, id := range still {
				left[id] = busy[id]
			}
			busy = left
		}
	}
	byN := map[int][]string{}
	for id, n := range counts {
		byN[n] = append(byN[n], id)
	}
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		ids := byN[n]
		slices.Sort(ids)
		for chunk := range slices.Chunk(ids, 500) {
			if err := tx.Table(table).Where("id IN ?", chunk).Update("recall_count", gorm.Expr("recall_count + ?", n)).Error; err != nil {
				return nil, err
			}
		}
	}
	return busy, nil
}

// closeRecallCounts stops the writer and writes what is left.
func (s *Store) closeRecallCounts() error {
	c := s.recalls
	started := true
	c.start.Do(func() { started = false; close(c.stopped) })
	if started {
		c.closing.Do(func() { close(c.stop) })
		<-c.stopped
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.FlushRecallCounts(ctx)
}
