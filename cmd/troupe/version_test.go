package main

import (
	"runtime/debug"
	"testing"
)

// troupe version comes from the build info, not a "dev" placeholder.
func TestVersionFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "6f790b2c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a"}, {Key: "vcs.time", Value: "2026-12-03T21:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"6f790b2c1d2e+dirty (2026-12-03T21:00:00Z)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "unknown (built without version control information)"},
	} {
		if got := versionOf(&tc.bi); got != tc.want {
			t.Errorf("versionOf(%+v) = %q, want %q", tc.bi.Main, got, tc.want)
		}
	}
	if got := buildVersion(); got == "" || got == "dev" {
		t.Errorf("buildVersion() = %q", got)
	}
}
