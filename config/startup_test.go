package config

import (
	"errors"
	"strings"
	"testing"
)

// A file with several mistakes names every one at once: wrong types,
// unknown keys, bad values from the file and from the environment.
func TestLoadReportsEveryProblem(t *testing.T) {
	t.Parallel()
	body := "model:\n  timeout: 120\n  temperature: 7\nmemory:\n  kep: 3\n  keep: 0\nlog:\n  level: loud\n"
	_, err := Load(writeConfig(t, body), envMap(map[string]string{"TROUPE_LIMITS_RATE_PER_MINUTE": "many"}))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %T %v, want Errors", err, err)
	}
	got := map[string]bool{}
	for _, e := range es {
		got[e.Key] = true
	}
	for _, key := range []string{"model.timeout", "model.temperature", "memory.kep", "memory.keep", "log.level", "limits.rate_per_minute"} {
		if !got[key] {
			t.Errorf("no problem reported for %s in %v", key, err)
		}
	}
	if len(es) != 6 {
		t.Errorf("%d problems, want 6: %v", len(es), err)
	}
	// Callers that look for one *Error still find one.
	var one *Error
	if !errors.As(err, &one) || one.Key == "" {
		t.Errorf("errors.As found no *Error in %v", err)
	}
}

// A duration written as a bare number gets the fix, not a Go unmarshal
// message; from the file and from the environment alike.
func TestDurationWithoutUnitHint(t *testing.T) {
	t.Parallel()
	_, err := Load(writeConfig(t, "model:\n  timeout: 120\n"), envMap(nil))
	var e *Error
	if !errors.As(err, &e) || e.Key != "model.timeout" {
		t.Fatalf("got %v, want an error for model.timeout", err)
	}
	if !strings.Contains(e.Problem, "write 120s") || strings.Contains(e.Problem, "unmarshal") || strings.Contains(e.Problem, "time.Duration") {
		t.Errorf("problem %q: want the hint \"write 120s\" and no Go message", e.Problem)
	}
	_, err = Load(writeConfig(t, ""), envMap(map[string]string{"TROUPE_MEMORY_IDLE_RECAP": "90"}))
	if !errors.As(err, &e) || e.Key != "memory.idle_recap" || !strings.Contains(e.Problem, "write 90s") {
		t.Errorf("from the environment: got %v, want the hint \"write 90s\"", err)
	}
}

// ops.listen must be HOST:PORT; empty still turns the endpoint off.
func TestOpsListenValidated(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"nonsense", "127.0.0.1", "localhost:http-ish", "127.0.0.1:99999", ":"} {
		c := Default()
		c.Ops.Listen = bad
		var e *Error
		if err := c.Validate(); !errors.As(err, &e) || e.Key != "ops.listen" {
			t.Errorf("ops.listen %q: got %v, want an error naming ops.listen", bad, err)
		}
	}
	for _, good := range []string{"", "127.0.0.1:9090", ":9090", "[::1]:9090", "localhost:0"} {
		c := Default()
		c.Ops.Listen = good
		if err := c.Validate(); err != nil {
			t.Errorf("ops.listen %q: %v", good, err)
		}
	}
}
