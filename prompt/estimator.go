package prompt

import "sync"

// Estimator estimates a prompt's tokens with the calibrated estimator
// and learns, per chat, from the prompt tokens the API reports. Near the
// context limit, Precise counts with the real BPE instead.
type Estimator struct {
	cal   *Calibration
	once  sync.Once
	exact *TokenCounter
}

// NewEstimator returns an estimator with a fresh calibration.
func NewEstimator() *Estimator { return &Estimator{cal: NewCalibration(0)} }

// Precise counts msgs with the o200k tokenizer (loaded on first use), scaled
// by what the chat's API reports. It is slower than Estimate: use it only
// when a prompt is close to the limit.
func (p *Estimator) Precise(key string, msgs []Message) int {
	p.once.Do(func() { p.exact, _ = NewTokenCounter(EncodingO200K) })
	if p.exact == nil {
		return p.Estimate(key, msgs)
	}
	n := 3
	for _, m := range msgs {
		n += 4 + p.exact.Count(m.Content)
	}
	return p.cal.Adjust(key, n)
}

// Estimate returns the estimated prompt tokens of msgs for the chat key,
// with OpenAI's per-message overhead.
func (p *Estimator) Estimate(key string, msgs []Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + EstimateTokens(m.Content)
	}
	return p.cal.Adjust(key, n)
}

// Observe records the API's count for a prompt that was estimated raw.
func (p *Estimator) Observe(key string, estimated, actual int) {
	if r := p.cal.Ratio(key); r > 0 {
		// estimated was already adjusted; learn against the raw estimate.
		estimated = int(float64(estimated)/r + 0.5)
	}
	p.cal.Observe(key, estimated, actual)
}
