package config

import (
	"testing"
	"time"
)

func TestLastReorganizeTime(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		at, zone string
		now      string
		want     string
	}{
		{"03:00", "", "2026-05-02T10:00:00Z", "2026-05-02T03:00:00Z"},
		{"03:00", "", "2026-05-02T02:59:00Z", "2026-05-01T03:00:00Z"},
		{"03:00", "Asia/Shanghai", "2026-05-02T19:30:00Z", "2026-05-02T19:00:00Z"},
		{"03:00", "Asia/Shanghai", "2026-05-02T18:30:00Z", "2026-05-01T19:00:00Z"},
		{"", "", "2026-05-02T10:00:00Z", ""},
	}
	for _, tt := range tests {
		got := Memory{ReorganizeAt: tt.at, Timezone: tt.zone}.LastReorganizeTime(utc(tt.now))
		if tt.want == "" {
			if !got.IsZero() {
				t.Errorf("%q: got %s, want none", tt.at, got)
			}
			continue
		}
		if !got.Equal(utc(tt.want)) {
			t.Errorf("at %s %q, now %s: got %s, want %s", tt.at, tt.zone, tt.now, got.UTC(), tt.want)
		}
	}
}
