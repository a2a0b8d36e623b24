package telegram

import "sync"

// seenSet remembers the last update ids handled, so an update delivered
// twice (a webhook retry, a poll after a failed save) is handled once.
type seenSet struct {
	mu    sync.Mutex
	ids   map[int]struct{}
	order []int
	max   int
}

func newSeenSet(max int) *seenSet {
	return &seenSet{ids: map[int]struct{}{}, max: max}
}

func (s *seenSet) has(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

// add records id; it reports false when id was already there.
func (s *seenSet) add(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	s.ids[id] = struct{}{}
	s.order = append(s.order, id)
	if len(s.order) > s.max {
		delete(s.ids, s.order[0])
		s.order = s.order[1:]
	}
	return true
}
