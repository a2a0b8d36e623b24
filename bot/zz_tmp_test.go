package bot
import ("testing";"strings";"time")
func TestTmpSplitTiming(t *testing.T) {
	for _, unit := range []string{"```p", "```", "``` ", "```p\n", "a```", "```\n\n"} {
	for _, n := range []int{10, 50, 119, 500, 2000} {
		for _, limit := range []int{16, 17, 20, 40} {
		text := strings.Repeat(unit, n)
		st := time.Now()
		pieces := Split(text, limit)
		d1 := time.Since(st)
		ok := splitKeepsText(text, pieces)
		d2 := time.Since(st)
		if d2 > 200*time.Millisecond || !ok { t.Logf("%q x%d limit %d: %d pieces split %v match %v ok=%v", unit, n, limit, len(pieces), d1, d2, ok) }
	}}}
}
