package prompt

import (
	"container/list"
	"math"
	"sync"
)

// Calibration bounds and rates.
const (
	// DefaultCalibrationKeys is how many keys a Calibration remembers
	// unless NewCalibration is told otherwise.
	DefaultCalibrationKeys = 10000

	// Ratios outside [0.5, 2] mean a mismatched estimate (a prompt counted
	// without its system part, say), not a tokenizer that differs.
	calibrationMinRatio = 0.5
	calibrationMaxRatio = 2.0
	// Below this many estimated tokens the fixed per-request overhead
	// dominates the ratio, so such samples teach nothing about the text.
	calibrationMinSample = 64
	// calibrationAlpha is the weight of each new sample in the moving average.
	calibrationAlpha = 0.3
)

// Calibration learns, per key (a chat, or a model), how the prompt tokens an
// API reports compare with an estimate, and scales later estimates to match.
// The zero value is ready to use and remembers DefaultCalibrationKeys keys;
// beyond that it forgets the least recently used. It is safe for concurrent use.
type Calibration struct {
	mu      sync.Mutex
	maxKeys int
	byKey   map[string]*list.Element // of *calibrationEntry
	lru     list.List                // front is the most recently used
}

type calibrationEntry struct {
	key   string
	ratio float64
}

// NewCalibration returns a Calibration that remembers at most maxKeys keys,
// or DefaultCalibrationKeys if maxKeys is not positive.
func NewCalibration(maxKeys int) *Calibration {
	return &Calibration{maxKeys: maxKeys}
}

// Observe records that a prompt estimated at estimated tokens was reported
// as actual tokens. The ratio actual/estimated, clamped to [0.5, 2], becomes
// the key's ratio on its first sample and moves the key's ratio by an
// exponential moving average afterwards. Samples under 64 estimated tokens
// or with no actual count are ignored.
func (c *Calibration) Observe(key string, estimated, actual int) {
	if estimated < calibrationMinSample || actual <= 0 {
		return
	}
	r := clampCalibrationRatio(float64(actual) / float64(estimated))

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		e := el.Value.(*calibrationEntry)
		e.ratio = clampCalibrationRatio(e.ratio + calibrationAlpha*(r-e.ratio))
		c.lru.MoveToFront(el)
		return
	}
	if c.byKey == nil {
		c.byKey = make(map[string]*list.Element)
	}
	limit := c.maxKeys
	if limit <= 0 {
		limit = DefaultCalibrationKeys
	}
	for c.lru.Len() >= limit {
		oldest := c.lru.Back()
		delete(c.byKey, oldest.Value.(*calibrationEntry).key)
		c.lru.Remove(oldest)
	}
	c.byKey[key] = c.lru.PushFront(&calibrationEntry{key: key, ratio: r})
}

// Adjust returns estimated scaled by the key's learned ratio, rounded to the
// nearest token, or estimated unchanged for a key with no samples.
func (c *Calibration) Adjust(key string, estimated int) int {
	r := c.Ratio(key)
	if r == 1 || estimated <= 0 {
		return estimated
	}
	return int(math.Round(float64(estimated) * r))
}

// Ratio returns the key's learned ratio of actual to estimated tokens, or 1
// for a key with no samples. Asking counts as a use for the forgetting order.
func (c *Calibration) Ratio(key string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return 1
	}
	c.lru.MoveToFront(el)
	return el.Value.(*calibrationEntry).ratio
}

// clampCalibrationRatio limits r to [calibrationMinRatio, calibrationMaxRatio].
func clampCalibrationRatio(r float64) float64 {
	return min(max(r, calibrationMinRatio), calibrationMaxRatio)
}
