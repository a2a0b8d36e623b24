package memory

import (
	"testing"

	"troupe/config"
)

// TestReflectDefaultsAreConfigs: reflection settings left 0 are filled from
// config.Default once, in NewService; set ones, and max_checks 0 (no
// checks), are kept; the trigger is never filled.
func TestReflectDefaultsAreConfigs(t *testing.T) {
	t.Parallel()
	d := config.Default().Reflection
	tests := []struct {
		name string
		in   ReflectConfig
		want ReflectConfig
	}{
		{"unset: config's defaults", ReflectConfig{},
			ReflectConfig{MaxChecks: d.MaxChecks, PivotalImportance: d.PivotalImportance}},
		{"set: kept", ReflectConfig{MaxChecks: 2, PivotalImportance: 6},
			ReflectConfig{MaxChecks: 2, PivotalImportance: 6}},
		{"max_checks 0: no checks, kept", ReflectConfigFrom(config.Reflection{MaxChecks: 0, PivotalImportance: 9}),
			ReflectConfig{MaxChecks: -1, PivotalImportance: 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := NewService(nil, nil, Config{Reflect: tc.in}, nil).cfg.Reflect
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
