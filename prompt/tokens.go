package prompt

import (
	"errors"
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// Token encodings understood by NewTokenCounter.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// ErrUnknownEncoding is returned by NewTokenCounter for an encoding other
// than EncodingCL100K or EncodingO200K.
var ErrUnknownEncoding = errors.New("prompt: unknown token encoding")

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
		return nil, fmt.Errorf("prompt: load token encoding %s: %w", encoding, err)
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
