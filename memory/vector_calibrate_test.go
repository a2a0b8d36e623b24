package memory_test

import (
	"math"
	"testing"

	"troupe/memory"
)

// Calibrate scales a similarity from what the query gives every pair (0)
// to identity (1): the same cosine is strong evidence from a model whose
// unrelated pairs score 0.1 and none from one whose score 0.65; it never
// raises a similarity.
func TestCalibrate(t *testing.T) {
	t.Parallel()
	tests := []struct{ sim, base, want float64 }{
		{0.65, 0.1, 0.611},
		{0.65, 0.65, 0},
		{0.98, 0.65, 0.943},
		{0.6, 0.7, 0},
		{0.5, -0.2, 0.5},
		{1, 1, 0},
	}
	for _, tt := range tests {
		if got := memory.Calibrate(tt.sim, tt.base); math.Abs(got-tt.want) > 0.001 {
			t.Errorf("Calibrate(%v, %v) = %.3f, want %.3f", tt.sim, tt.base, got, tt.want)
		}
		if got := memory.Calibrate(tt.sim, tt.base); got > max(tt.sim, 0) {
			t.Errorf("Calibrate(%v, %v) = %.3f raises the similarity", tt.sim, tt.base, got)
		}
	}
}
