package text

import "testing"

func TestClip(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in             string
		n              int
		clip, ellipsis string
	}{
		{"short", 5, "short", "short"},
		{"shorter", 5, "shor…", "shor…"},
		{"ab cd", 4, "ab…", "ab …"}, // Clip drops the space before the mark, Ellipsis keeps the cut exact
		{"在北京的家", 3, "在北…", "在北…"},
		{"anything", 1, "…", "…"},
		{"anything", 0, "", "…"},
		{"", 0, "", ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.clip)
		}
		if got := Ellipsis(tt.in, tt.n); got != tt.ellipsis {
			t.Errorf("Ellipsis(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.ellipsis)
		}
	}
}
