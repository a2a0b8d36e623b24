package models

import "time"

// SetPause makes every memory write of s call pause(point) inside its
// transaction, after its locks and checks and before it writes ("install
// summary", "install recap", "install consolidation", "delete recap",
// "edit memory", "forget").
func SetPause(s *Store, pause func(point string)) { s.pause = pause }

// WriterWaits counts the writes that waited for a SQLite store's writing
// connection.
func WriterWaits(s *Store) int64 { return s.db.ConnPool.(*gatedPool).gate.waits.Load() }

// WALFrames is what the checkpointer reads from a SQLite store's WAL-index
// file: the WAL's length and the frames of it not yet copied.
func WALFrames(s *Store) (length, backlog int, ok bool) { return s.walIndex.frames() }

// StopCheckpointer ends a SQLite store's checkpointer for good.
func StopCheckpointer(s *Store) { s.stopCheckpoints() }

// The checkpointer's lengths in frames, and its plan for one tick.
const (
	WALRestartFrames  = walRestartFrames
	WALBackstopFrames = walBackstopFrames
)

var (
	CheckpointModes = checkpointModes
	RestartWait     = restartWait
)

// SetWriteDefer sets how long a SQLite store's background writes give way
// to others (maxDefer), for writes that start waiting after the call.
func SetWriteDefer(s *Store, d time.Duration) {
	g := s.db.ConnPool.(*gatedPool).gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maxDefer = d
}

// RecallPerceptionsSQL is the query RecallItems loads perceptions with.
const RecallPerceptionsSQL = recallPerceptionsSQL

var RedactSecrets = redactSecrets

// TextArray and Int64Array are the array parameters the PostgreSQL
// statements pass their id and column lists as.
func TextArray(v []string) any { return textArray(v) }
func Int64Array(v []int64) any { return int64Array(v) }
