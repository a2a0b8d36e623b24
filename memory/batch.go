package memory

import (
	"cmp"
	"errors"
	"sync"

	"troupe/prompt"
)

// Side-model calls are bounded (DESIGN.md "Bounded batches"): each fits the
// scribe's context window with room for its answer, and work larger than
// one call goes in batches of at most Config.BatchTokens of material.

// The bounds a Config left at zero falls back to.
const (
	// DefaultScribeWindow is the scribe's context window in tokens when
	// neither scribe.context_window nor the endpoint's model list says:
	// small enough for most local models served today.
	DefaultScribeWindow = 16384
	// DefaultBatchTokens is memory.batch_tokens' default.
	DefaultBatchTokens = 16000
	// defaultAnswerTokens is room left for the scribe's answer when
	// scribe.max_reply_tokens is not known.
	defaultAnswerTokens = 4096
	// minCallTokens is the smallest prompt limit a refusal can bring the
	// service down to: below it no call is worth making.
	minCallTokens = 512
)

// sideMargin leaves room for another tokenizer's count: the endpoint
// counts with its model's vocabulary, troupe with o200k.
const sideMargin = 1.1

// FaultTooLong is the kind of a refusal of a prompt longer than the
// model's context window (an HTTP 400 context_length_exceeded, a 413).
const FaultTooLong = "context_length"

// IsTooLong reports whether err is the endpoint's refusal of a prompt
// longer than its window; read from the error's kind, never its text.
func IsTooLong(err error) bool {
	return err != nil && FaultOf(err).Kind == FaultTooLong
}

// sideTokens counts the scribe's prompts with the o200k encoding, loaded
// once for the process (nil when it cannot load: prompt.EstimateTokens then).
var sideTokens = sync.OnceValue(func() *prompt.TokenCounter {
	c, err := prompt.NewTokenCounter(prompt.EncodingO200K)
	if err != nil {
		return nil
	}
	return c
})

// countTokens counts text with the project's tokenizer.
func countTokens(text string) int {
	if c := sideTokens(); c != nil {
		return c.Count(text)
	}
	return prompt.EstimateTokens(text)
}

// promptTokens counts a prompt as the endpoint will: its messages' text
// and OpenAI's overhead per message.
func promptTokens(msgs []prompt.Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + countTokens(m.Content)
	}
	return n
}

// callLimit is how many prompt tokens one side-model call may take: the
// window less the answer's room, with a margin, and never more than a
// context-length refusal has shown the endpoint to take.
func (s *Service) callLimit() int {
	window := cmp.Or(s.cfg.ContextWindow, DefaultScribeWindow)
	answer := min(cmp.Or(s.cfg.AnswerTokens, defaultAnswerTokens), window/2)
	limit := int(float64(window-answer) / sideMargin)
	if c := int(s.ceiling.Load()); c > 0 && c < limit {
		limit = c
	}
	return limit
}

// batchLimit is how many tokens of material (transcript, events, recaps)
// one call may carry.
func (s *Service) batchLimit() int {
	return cmp.Or(s.cfg.BatchTokens, DefaultBatchTokens)
}

// lowerCeiling makes every later call of the service fit in tokens (never
// below minCallTokens), after the endpoint refused a longer prompt; a
// lower ceiling already set stays.
func (s *Service) lowerCeiling(tokens int) {
	tokens = max(tokens, minCallTokens)
	for {
		cur := s.ceiling.Load()
		if cur > 0 && int64(tokens) >= cur {
			return
		}
		if s.ceiling.CompareAndSwap(cur, int64(tokens)) {
			return
		}
	}
}

// batch is one call's share of some work: its prompt and the material in
// it that batches split.
type batch struct {
	prompt   []prompt.Message
	material string
}

// fits reports whether b may be sent in one call. Most batches are far
// below the limits in bytes alone, and with the o200k codec a token
// stands for at least one byte: a text under its limit in bytes is not
// counted (counting took 8% of troupe's CPU in troupe bench, the
// recorder's material counted twice, alone and in its prompt).
func (s *Service) fits(b batch) bool {
	bound := sideTokens() != nil
	if !(bound && len(b.material) <= s.batchLimit()) && countTokens(b.material) > s.batchLimit() {
		return false
	}
	return (bound && promptBytes(b.prompt) <= s.callLimit()) || promptTokens(b.prompt) <= s.callLimit()
}

// promptBytes is promptTokens' bound: the messages' bytes and the same
// overhead.
func promptBytes(msgs []prompt.Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + len(m.Content)
	}
	return n
}

// fitBatch returns the largest k in [1, n] whose batch build(k) fits
// (build grows with k); 1 when none does, since one unit is the smallest
// batch there is.
func (s *Service) fitBatch(n int, build func(k int) batch) int {
	if n <= 1 || s.fits(build(n)) {
		return max(n, 1)
	}
	lo, hi := 1, n-1 // lo is taken to fit (or be the smallest); hi may
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s.fits(build(mid)) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// errTooLongUnit: one unit of work alone was refused as too long.
var errTooLongUnit = errors.New("memory: the smallest batch is longer than the scribe's context window")

// askBatch sends the largest batch of n units that fits through call.
// When the endpoint refuses its prompt as too long, the service's limit
// drops to half that prompt and a smaller batch is asked for, until a
// batch of one unit is refused too, or one the limit cannot go below. The
// limit may have dropped meanwhile through another job's refusal (the
// recorder and compaction run side by side): what counts is whether the
// limit is now below the prompt refused, not who lowered it. It returns
// call's answer and the number of units it covers.
func askBatch[T any](s *Service, kind string, n int, build func(k int) batch, call func([]prompt.Message) (T, error)) (T, int, error) {
	for {
		k := s.fitBatch(n, build)
		b := build(k)
		out, err := call(b.prompt)
		if !IsTooLong(err) {
			return out, k, err
		}
		size := promptTokens(b.prompt)
		s.lowerCeiling(size / 2)
		if k == 1 || s.callLimit() >= size {
			var zero T
			return zero, 0, errors.Join(errTooLongUnit, err)
		}
		s.log.Warn("the scribe refused a prompt as longer than its window; halving the batch",
			"kind", kind, "prompt_tokens", size, "units", k, "limit", s.callLimit())
	}
}
