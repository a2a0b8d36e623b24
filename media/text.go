package media

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxTextChars is how much of a text file is read by default.
const DefaultMaxTextChars = 8000

// ReadText is a text attachment's text: a UTF-8 byte order mark dropped,
// CRLF and lone CR line ends made LF, and clipped to maxChars runes
// (DefaultMaxTextChars when maxChars <= 0), cut reporting that it was.
// Bytes that are not UTF-8 or hold a NUL (a binary file, UTF-16) are
// ErrMalformed, wrapped with the reason.
func ReadText(data []byte, maxChars int) (text string, cut bool, err error) {
	if maxChars <= 0 {
		maxChars = DefaultMaxTextChars
	}
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return "", false, fmt.Errorf("%w: UTF-16 text, not UTF-8", ErrMalformed)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return "", false, fmt.Errorf("%w: a NUL byte at %d (a binary file)", ErrMalformed, i)
	}
	if !utf8.Valid(data) {
		return "", false, fmt.Errorf("%w: not UTF-8 text", ErrMalformed)
	}
	text = strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	n := 0
	for i := range text {
		if n == maxChars {
			return text[:i], true, nil
		}
		n++
	}
	return text, false, nil
}
