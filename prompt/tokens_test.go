package prompt

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// readTokenFixture returns the text of testdata/tokens/name.
func readTokenFixture(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tokens", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// tokenMixFixture interleaves the paragraphs of the Chinese and English
// scenes, so half the text switches script at every paragraph.
func tokenMixFixture(tb testing.TB) string {
	tb.Helper()
	zh := strings.Split(readTokenFixture(tb, "zh.txt"), "\n\n")
	en := strings.Split(readTokenFixture(tb, "en.txt"), "\n\n")
	var out []string
	for i := 0; i < len(zh) || i < len(en); i++ {
		if i < len(zh) {
			out = append(out, zh[i])
		}
		if i < len(en) {
			out = append(out, en[i])
		}
	}
	return strings.Join(out, "\n\n")
}

// newTestTokenCounter returns a counter for encoding or stops the test.
func newTestTokenCounter(tb testing.TB, encoding string) *TokenCounter {
	tb.Helper()
	c, err := NewTokenCounter(encoding)
	if err != nil {
		tb.Fatalf("NewTokenCounter(%q): %v", encoding, err)
	}
	return c
}

func TestTokenCounterCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		encoding string
		text     string
		want     int
	}{
		{EncodingCL100K, "", 0},
		{EncodingCL100K, "hello world", 2},
		{EncodingO200K, "hello world", 2},
		{EncodingCL100K, "你好", 2}, // 你|好
		{EncodingO200K, "你好", 1},  // 你好
		{EncodingO200K, "你好，世界", 3},
		{EncodingO200K, "1234567", 3}, // digits go in threes: 123|456|7
		{"", "hello world", 2},
	}
	for _, tt := range tests {
		t.Run(tt.encoding+"/"+tt.text, func(t *testing.T) {
			t.Parallel()
			c := newTestTokenCounter(t, tt.encoding)
			if got := c.Count(tt.text); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestTokenCounterEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"", EncodingO200K},
		{EncodingO200K, EncodingO200K},
		{EncodingCL100K, EncodingCL100K},
	}
	for _, tt := range tests {
		if got := newTestTokenCounter(t, tt.in).Encoding(); got != tt.want {
			t.Errorf("NewTokenCounter(%q).Encoding() = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, name := range []string{"p50k_base", "gpt2", "O200K_BASE"} {
		if _, err := NewTokenCounter(name); !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("NewTokenCounter(%q) error = %v, want ErrUnknownEncoding", name, err)
		}
	}
}

func TestTokenCounterConcurrent(t *testing.T) {
	t.Parallel()
	c := newTestTokenCounter(t, EncodingO200K)
	texts := []string{readTokenFixture(t, "zh.txt"), readTokenFixture(t, "en.txt")}
	want := []int{c.Count(texts[0]), c.Count(texts[1])}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 4 {
				k := (g + i) % 2
				if got := c.Count(texts[k]); got != want[k] {
					t.Errorf("concurrent Count(text %d) = %d, want %d", k, got, want[k])
				}
			}
		})
	}
	wg.Wait()
}

func TestTokenEstimateFixtures(t *testing.T) {
	t.Parallel()
	c := newTestTokenCounter(t, EncodingO200K)
	tests := []struct {
		name string
		text string
	}{
		{"zh", readTokenFixture(t, "zh.txt")},
		{"en", readTokenFixture(t, "en.txt")},
		{"mix", tokenMixFixture(t)},
		// Not used to fit the weights: a check that they carry over.
		{"zh_card", readTokenFixture(t, "zh_card.txt")},
		{"en_card", readTokenFixture(t, "en_card.txt")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exact := c.Count(tt.text)
			got := EstimateTokens(tt.text)
			errPct := 100 * float64(got-exact) / float64(exact)
			naive := 100 * (float64(len([]rune(tt.text)))/4 - float64(exact)) / float64(exact)
			t.Logf("%s: estimate %d, o200k %d, error %+.1f%% (runes/4: %+.1f%%)", tt.name, got, exact, errPct, naive)
			if math.Abs(errPct) > 10 {
				t.Errorf("EstimateTokens(%s) = %d, want within 10%% of %d (error %+.1f%%)", tt.name, got, exact, errPct)
			}
		})
	}
}

func TestTokenEstimateSmall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text     string
		min, max int
	}{
		{"", 0, 0},
		{"a", 1, 1},
		{"\n", 1, 1},
		{"hello world", 2, 2},
		{"你好，世界", 3, 5},
		{"「走吧。」", 3, 5},
		{"*She smiles.*", 4, 6},
		{"It's 12345678.", 4, 7},
		{"it’s", 2, 3},
		{"Привет, как дела?", 4, 8},
		{"こんにちは、今日はいい天気ですね。", 6, 12},
		{"안녕하세요, 오늘 날씨가 좋네요.", 7, 14},
		{"😀👍", 2, 4},
		{"\xff\xfe", 1, 4},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.text); got < tt.min || got > tt.max {
			t.Errorf("EstimateTokens(%q) = %d, want %d..%d", tt.text, got, tt.min, tt.max)
		}
	}
}

func TestTokenEstimateAllocs(t *testing.T) {
	text := tokenMixFixture(t)
	if got := testing.AllocsPerRun(10, func() { EstimateTokens(text) }); got != 0 {
		t.Errorf("EstimateTokens allocates %v times per call, want 0", got)
	}
}

func TestTokenCalibrationConverges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		estimated int
		actual    int
		want      float64
	}{
		{"undercount", 1000, 1300, 1.3},
		{"overcount", 1000, 800, 0.8},
		{"clamped high", 1000, 5000, 2.0},
		{"clamped low", 1000, 100, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c Calibration
			// Start from a different ratio so the average has to move.
			c.Observe("chat", 1000, 1000)
			for range 30 {
				c.Observe("chat", tt.estimated, tt.actual)
			}
			if got := c.Ratio("chat"); math.Abs(got-tt.want) > 0.01 {
				t.Errorf("Ratio after 30 samples = %.3f, want %.2f", got, tt.want)
			}
			want := int(math.Round(500 * tt.want))
			if got := c.Adjust("chat", 500); got < want-1 || got > want+1 {
				t.Errorf("Adjust(500) = %d, want %d", got, want)
			}
		})
	}
}

func TestTokenCalibrationMovingAverage(t *testing.T) {
	t.Parallel()
	var c Calibration
	c.Observe("chat", 1000, 1500)
	if got := c.Ratio("chat"); got != 1.5 {
		t.Errorf("Ratio after first sample = %v, want 1.5", got)
	}
	c.Observe("chat", 1000, 1000)
	// One sample moves the ratio part of the way, not all of it.
	if got := c.Ratio("chat"); got <= 1.0 || got >= 1.5 {
		t.Errorf("Ratio after a second sample of 1.0 = %v, want between 1.0 and 1.5", got)
	}
	if got := c.Ratio("other"); got != 1 {
		t.Errorf("Ratio of an unseen key = %v, want 1", got)
	}
}

func TestTokenCalibrationIgnores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		estimated, actual int
	}{
		{"tiny estimate", 10, 30},
		{"zero estimate", 0, 100},
		{"negative estimate", -5, 100},
		{"no actual", 1000, 0},
	}
	for _, tt := range tests {
		var c Calibration
		c.Observe("chat", tt.estimated, tt.actual)
		if got := c.Adjust("chat", 1000); got != 1000 {
			t.Errorf("%s: Adjust after Observe(%d, %d) = %d, want 1000", tt.name, tt.estimated, tt.actual, got)
		}
	}
}

func TestTokenCalibrationBounded(t *testing.T) {
	t.Parallel()
	c := NewCalibration(3)
	c.Observe("a", 100, 150)
	c.Observe("b", 100, 150)
	c.Observe("c", 100, 150)
	c.Ratio("a") // a is now more recent than b
	c.Observe("d", 100, 150)
	if got := len(c.byKey); got != 3 {
		t.Errorf("keys kept = %d, want 3", got)
	}
	if got := c.lru.Len(); got != 3 {
		t.Errorf("LRU length = %d, want 3", got)
	}
	for key, want := range map[string]float64{"a": 1.5, "b": 1, "c": 1.5, "d": 1.5} {
		if got := c.Ratio(key); got != want {
			t.Errorf("Ratio(%q) = %v, want %v", key, got, want)
		}
	}

	var zero Calibration
	for i := range DefaultCalibrationKeys + 10 {
		zero.Observe(strconv.Itoa(i), 100, 120)
	}
	if got := len(zero.byKey); got != DefaultCalibrationKeys {
		t.Errorf("zero Calibration keeps %d keys, want %d", got, DefaultCalibrationKeys)
	}
}

func TestTokenCalibrationConcurrent(t *testing.T) {
	t.Parallel()
	c := NewCalibration(16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := string(rune('a' + (g+i)%20))
				c.Observe(key, 1000, 1200)
				c.Adjust(key, 1000)
			}
		})
	}
	wg.Wait()
	if got := c.Ratio("a"); got != 1 && math.Abs(got-1.2) > 1e-9 {
		t.Errorf("Ratio(a) = %v, want 1.2 or 1 (forgotten)", got)
	}
}

func BenchmarkCountExactTokens(b *testing.B) {
	c := newTestTokenCounter(b, EncodingO200K)
	for _, name := range []string{"zh", "en"} {
		text := readTokenFixture(b, name+".txt")
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

func BenchmarkEstimateTokens(b *testing.B) {
	c := newTestTokenCounter(b, EncodingO200K)
	for _, name := range []string{"zh", "en"} {
		text := readTokenFixture(b, name+".txt")
		exact := c.Count(text)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var got int
			for b.Loop() {
				got = EstimateTokens(text)
			}
			b.ReportMetric(100*float64(got-exact)/float64(exact), "err%")
		})
	}
}
