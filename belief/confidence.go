package belief

import (
	"fmt"
	"strings"
)

// Confidence is how firmly a character holds a belief. The zero value is not
// a confidence; the order is Doubtful < Likely < Sure.
type Confidence int

// The confidences, lowest first.
const (
	Doubtful Confidence = iota + 1
	Likely
	Sure
)

var confidenceWords = [...]string{Doubtful: "doubtful", Likely: "likely", Sure: "sure"}

// String returns the word the prompts and the JSON use.
func (c Confidence) String() string {
	if !c.Valid() {
		return fmt.Sprintf("Confidence(%d)", int(c))
	}
	return confidenceWords[c]
}

// Valid reports whether c is one of the three confidences.
func (c Confidence) Valid() bool { return c >= Doubtful && c <= Sure }

// Up is one level higher, at most Sure.
func (c Confidence) Up() Confidence {
	if c >= Sure {
		return Sure
	}
	if c < Doubtful {
		return Doubtful
	}
	return c + 1
}

// Down is one level lower, never below Doubtful.
func (c Confidence) Down() Confidence {
	if c <= Doubtful {
		return Doubtful
	}
	if c > Sure {
		return Sure
	}
	return c - 1
}

// ParseConfidence reads doubtful, likely or sure (any case, spaces around).
// Any other word returns an error wrapping ErrConfidence.
func ParseConfidence(s string) (Confidence, error) {
	w := strings.ToLower(strings.TrimSpace(s))
	for c := Doubtful; c <= Sure; c++ {
		if confidenceWords[c] == w {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrConfidence, s)
}

// MarshalText writes the confidence's word.
func (c Confidence) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrConfidence, int(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads the confidence's word.
func (c *Confidence) UnmarshalText(b []byte) error {
	v, err := ParseConfidence(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
