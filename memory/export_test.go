package memory

import "troupe/prompt"

// What the package's outside tests (package memory_test, which may import
// the real model client) reach inside it.

// LowerCeiling is lowerCeiling: another job's refusal.
func (s *Service) LowerCeiling(tokens int) { s.lowerCeiling(tokens) }

// CallLimit is callLimit.
func (s *Service) CallLimit() int { return s.callLimit() }

// PromptTokens is promptTokens.
func PromptTokens(msgs []prompt.Message) int { return promptTokens(msgs) }

// AskBatch is askBatch over batches of a prompt and the material in it.
func AskBatch(s *Service, n int, build func(k int) ([]prompt.Message, string), call func([]prompt.Message) (string, error)) (string, int, error) {
	return askBatch(s, "summary", n, func(k int) batch {
		msgs, material := build(k)
		return batch{prompt: msgs, material: material}
	}, call)
}
