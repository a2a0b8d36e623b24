package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
		{"http date", map[string]string{"Retry-After": "Sat, 01 Mar 2025 12:00:42 GMT"}, 42 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": "Sat, 01 Mar 2025 11:00:00 GMT"}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"milliseconds win", map[string]string{"Retry-After": "2", "Retry-After-Ms": "1500"}, 1500 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	c := New(Config{RetryBase: 100 * time.Millisecond}, nil)
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		min, max   time.Duration
	}{
		{"first", 0, 0, 100 * time.Millisecond, 150 * time.Millisecond},
		{"second doubles", 1, 0, 200 * time.Millisecond, 300 * time.Millisecond},
		{"retry after wins", 1, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{"retry after capped", 0, time.Hour, maxRetryWait, maxRetryWait},
		{"backoff capped", 40, 0, maxRetryWait, maxRetryWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for range 50 {
				if got := c.backoff(tt.attempt, tt.retryAfter); got < tt.min || got > tt.max {
					t.Fatalf("got %v, want between %v and %v", got, tt.min, tt.max)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{"zero", Config{}, Config{Timeout: DefaultTimeout, MaxRetries: DefaultMaxRetries, RetryBase: DefaultRetryBase}},
		{"no retries", Config{MaxRetries: -1}, Config{Timeout: DefaultTimeout, MaxRetries: 0, RetryBase: DefaultRetryBase}},
		{"kept", Config{BaseURL: "http://localhost:11434/v1/", Timeout: time.Second, MaxRetries: 5, RetryBase: time.Millisecond},
			Config{BaseURL: "http://localhost:11434/v1", Timeout: time.Second, MaxRetries: 5, RetryBase: time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.in.withDefaults(); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
