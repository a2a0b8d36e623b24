package llm

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	oai "github.com/sashabaranov/go-openai"
)

// redacted replaces a credential in text.
const redacted = "[redacted]"

// credentials removes one client's API key, and anything shaped like a
// credential, from the errors it returns. Every client of this package
// (chat, scribe, embeddings, rerank) passes its errors through one: servers
// echo keys back in their error bodies, and net/http quotes request URLs,
// which may carry a key in their query.
type credentials struct{ key string }

// Credential-shaped text: what follows a bearer or an Authorization header,
// an API key field, a key in a URL query, the password of a URL.
var (
	bearerText   = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[^\s"',;]+`)
	authHeader   = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization"?\s*[:=]\s*"?)(?:(?:bearer|basic)\s+)?[^\s"',;]+`)
	keyField     = regexp.MustCompile(`(?i)\b((?:x-)?api[_-]?key"?\s*[:=]\s*"?)[^\s"',;&]+`)
	keyInQuery   = regexp.MustCompile(`(?i)([?&](?:api[_-]?key|key|token|access_token|auth|password|secret)=)[^&\s"'#]+`)
	urlPassword  = regexp.MustCompile(`(://[^/\s:@"']*:)[^@/\s"']+@`)
	minKeyLength = 8
)

// strip returns s without the key and credential-shaped text. The key
// itself is cut wherever it appears when it could not be an ordinary word
// (at least minKeyLength long and not only letters: "ollama" as the key of
// a local server must not turn every mention of ollama into [redacted]); a
// shorter or word-like key is cut where it stands as a credential.
func (c credentials) strip(s string) string {
	if c.key != "" && len(c.key) >= minKeyLength && !onlyLetters(c.key) {
		s = strings.ReplaceAll(s, c.key, redacted)
		if q := url.QueryEscape(c.key); q != c.key {
			s = strings.ReplaceAll(s, q, redacted)
		}
	}
	s = bearerText.ReplaceAllString(s, "$1 "+redacted)
	s = authHeader.ReplaceAllString(s, "${1}"+redacted)
	s = keyField.ReplaceAllString(s, "${1}"+redacted)
	s = keyInQuery.ReplaceAllString(s, "${1}"+redacted)
	return urlPassword.ReplaceAllString(s, "${1}"+redacted+"@")
}

func onlyLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// clean returns err with the credentials cut out of its text and of the
// provider's fields along its chain (an API error's message, a request
// error's body, a url.Error's URL), so that neither printing it nor
// unwrapping it shows them. The chain is kept: errors.Is and errors.As
// still match.
func (c credentials) clean(err error) error {
	if err == nil {
		return nil
	}
	var apiErr *oai.APIError
	if errors.As(err, &apiErr) {
		apiErr.Message = c.strip(apiErr.Message)
	}
	var reqErr *oai.RequestError
	if errors.As(err, &reqErr) {
		reqErr.Body = []byte(c.strip(string(reqErr.Body)))
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		urlErr.URL = c.strip(urlErr.URL)
	}
	msg := err.Error()
	if clean := c.strip(msg); clean != msg {
		return &strippedError{msg: clean, err: err}
	}
	return err
}

// strippedError is an error whose message had credentials cut out.
type strippedError struct {
	msg string
	err error
}

func (e *strippedError) Error() string { return e.msg }
func (e *strippedError) Unwrap() error { return e.err }
