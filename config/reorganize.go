package config

import "time"

// LastReorganizeTime returns the latest moment at or before now when the
// nightly reorganize (memory.reorganize_at in memory.timezone) was due;
// zero when there is none. The time was checked by Validate.
func (m Memory) LastReorganizeTime(now time.Time) time.Time {
	if m.ReorganizeAt == "" {
		return time.Time{}
	}
	at, err := time.Parse("15:04", m.ReorganizeAt)
	if err != nil {
		return time.Time{}
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		loc = time.UTC
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), at.Hour(), at.Minute(), 0, 0, loc)
	if t.After(local) {
		t = time.Date(local.Year(), local.Month(), local.Day()-1, at.Hour(), at.Minute(), 0, 0, loc)
	}
	return t
}
