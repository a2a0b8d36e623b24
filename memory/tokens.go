package memory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tiktoken-go/tokenizer"
)

// Token encodings understood by NewTokenCounter.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// ErrUnknownEncoding is returned by NewTokenCounter for an encoding other
// than EncodingCL100K or EncodingO200K.
var ErrUnknownEncoding = errors.New("memory: unknown token encoding")

// OpenAI's chat format wraps every message in a few tokens of its own
// (<|start|>role<|message|>content<|end|>) and primes the reply with
// <|start|>assistant<|message|>; see the openai-cookbook recipe
// "How to count tokens with tiktoken".
const (
	tokenMessageOverhead = 3
	tokenReplyPriming    = 3
)

// TokenMessage is one chat message as CountMessages sees it.
type TokenMessage struct {
	Role    string
	Content string
}

// TokenCounter counts tokens exactly with an OpenAI BPE encoding whose
// vocabulary is compiled into the binary, so it needs no network.
// It is safe for concurrent use.
type TokenCounter struct {
	codec    tokenizer.Codec
	encoding string
}

// NewTokenCounter returns a counter for encoding, which is EncodingCL100K,
// EncodingO200K, or "" for EncodingO200K. Any other name returns an error
// wrapping ErrUnknownEncoding. The first counter for each encoding loads its
// vocabulary, which takes a noticeable fraction of a second; later ones share it.
func NewTokenCounter(encoding string) (*TokenCounter, error) {
	if encoding == "" {
		encoding = EncodingO200K
	}
	var enc tokenizer.Encoding
	switch encoding {
	case EncodingCL100K:
		enc = tokenizer.Cl100kBase
	case EncodingO200K:
		enc = tokenizer.O200kBase
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownEncoding, encoding)
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("memory: load token encoding %s: %w", encoding, err)
	}
	// Like tiktoken, read invalid UTF-8 as U+FFFD instead of failing.
	// Set before the codec is shared, so no goroutine races on it.
	codec.SetErrorMode(tokenizer.ErrorModeReplace)
	return &TokenCounter{codec: codec, encoding: encoding}, nil
}

// Encoding returns the name of the counter's encoding.
func (c *TokenCounter) Encoding() string {
	return c.encoding
}

// Count returns the number of tokens in text. The encoding has no failure
// mode for text the counter accepts; should the tokenizer report an error
// anyway, Count falls back to EstimateTokens rather than return 0.
func (c *TokenCounter) Count(text string) int {
	if text == "" {
		return 0
	}
	n, err := c.codec.Count(text)
	if err != nil {
		return EstimateTokens(text)
	}
	return n
}

// CountMessages returns the prompt tokens that msgs take in an OpenAI chat
// request: each message costs its role and content plus a fixed overhead,
// and the request adds the tokens that prime the assistant's reply, so an
// empty list counts only those.
func (c *TokenCounter) CountMessages(msgs []TokenMessage) int {
	n := tokenReplyPriming
	for _, m := range msgs {
		n += tokenMessageOverhead + c.Count(m.Role) + c.Count(m.Content)
	}
	return n
}

// EncodingForModel returns the encoding an OpenAI model name uses:
// EncodingO200K for gpt-4o, gpt-4.1, the o-series and gpt-5, EncodingCL100K
// for older gpt-4 and gpt-3.5 models. It ignores case, a provider prefix
// ("openai/gpt-4o") and a fine-tune prefix ("ft:gpt-4o-mini:acme"), and
// returns EncodingO200K for names it does not know, as newer models use it.
func EncodingForModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	m = strings.TrimPrefix(m, "ft:")
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "chatgpt-4o"),
		strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"),
		isOSeriesModel(m):
		return EncodingO200K
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"),
		strings.HasPrefix(m, "gpt-35"), strings.HasPrefix(m, "text-embedding-"):
		return EncodingCL100K
	default:
		return EncodingO200K
	}
}

// isOSeriesModel reports whether m names an o-series reasoning model:
// o1, o3, o4 and their variants ("o3-mini", "o1-preview-2024-09-12").
func isOSeriesModel(m string) bool {
	for _, p := range [...]string{"o1", "o3", "o4"} {
		if rest, ok := strings.CutPrefix(m, p); ok && (rest == "" || rest[0] == '-') {
			return true
		}
	}
	return false
}
