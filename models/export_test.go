package models

// SetPause makes every memory write of s call pause(point) inside its
// transaction, after its locks and checks and before it writes ("install
// summary", "install recap", "install consolidation", "delete recap",
// "edit memory", "forget").
func SetPause(s *Store, pause func(point string)) { s.pause = pause }
