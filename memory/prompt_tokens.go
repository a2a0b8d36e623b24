package memory

// PromptEstimator estimates a prompt's tokens with the calibrated estimator
// and learns, per chat, from the prompt tokens the API reports.
type PromptEstimator struct {
	cal *Calibration
}

// NewPromptEstimator returns an estimator with a fresh calibration.
func NewPromptEstimator() *PromptEstimator { return &PromptEstimator{cal: NewCalibration(0)} }

// Estimate returns the estimated prompt tokens of msgs for the chat key,
// with OpenAI's per-message overhead.
func (p *PromptEstimator) Estimate(key string, msgs []Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + EstimateTokens(m.Content)
	}
	return p.cal.Adjust(key, n)
}

// Observe records the API's count for a prompt that was estimated raw.
func (p *PromptEstimator) Observe(key string, estimated, actual int) {
	if r := p.cal.Ratio(key); r > 0 {
		// estimated was already adjusted; learn against the raw estimate.
		estimated = int(float64(estimated)/r + 0.5)
	}
	p.cal.Observe(key, estimated, actual)
}
