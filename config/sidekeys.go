package config

import (
	"net/url"
	"strings"
)

// A side endpoint (the scribe, recall.embeddings, recall.rerank, tts,
// image) is sent its own api_key. Without one it borrows the main model's
// only when it is on the main model's server: the same scheme, host and
// port. A key sent to another server is a key given away.

// sideKey is the key a side endpoint at baseURL sends: own when set, else
// the main model's when baseURL is on its server, else none.
func (c Config) sideKey(baseURL string, own Secret) Secret {
	if own != "" {
		return own
	}
	if SameServer(baseURL, c.Model.BaseURL) {
		return c.Model.APIKey
	}
	return ""
}

// SameServer reports whether two API base URLs name one server: the same
// scheme, host (in any case) and port, a missing port being the scheme's.
// An empty URL is DefaultBaseURL; a URL that does not parse is no server's.
func SameServer(a, b string) bool {
	sa, ok := server(a)
	if !ok {
		return false
	}
	sb, ok := server(b)
	return ok && sa == sb
}

// server returns "scheme://host:port" of an API base URL.
func server(raw string) (string, bool) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port, true
}

// RecallEmbeddings returns recall.embeddings with the key it sends
// (sideKey).
func (c Config) RecallEmbeddings() Embeddings {
	e := c.Recall.Embeddings
	e.APIKey = c.sideKey(e.BaseURL, e.APIKey)
	return e
}

// RecallRerank returns recall.rerank with the key it sends (sideKey).
func (c Config) RecallRerank() Rerank {
	r := c.Recall.Rerank
	r.APIKey = c.sideKey(r.BaseURL, r.APIKey)
	return r
}

// STTEndpoint returns stt with the key it sends (sideKey).
func (c Config) STTEndpoint() STT {
	s := c.STT
	s.APIKey = c.sideKey(s.BaseURL, s.APIKey)
	return s
}

// KeylessSideEndpoints names the side endpoints in use that send no key
// because they are on another server than the main model, which has one:
// each is worth a warning at start, since such an endpoint that needs a
// key fails on every call.
func (c Config) KeylessSideEndpoints() []string {
	if c.Model.APIKey == "" {
		return nil
	}
	var out []string
	if c.ScribeModel().APIKey == "" {
		out = append(out, "scribe")
	}
	if c.Recall.Embeddings.On() && c.RecallEmbeddings().APIKey == "" {
		out = append(out, "recall.embeddings")
	}
	if c.Recall.Rerank.On() && c.RecallRerank().APIKey == "" {
		out = append(out, "recall.rerank")
	}
	if c.TTS.On() && c.SpeechEndpoint().APIKey == "" {
		out = append(out, "tts")
	}
	if c.Image.On() && c.ImageEndpoint().APIKey == "" {
		out = append(out, "image")
	}
	if c.STT.On() && c.STTEndpoint().APIKey == "" {
		out = append(out, "stt")
	}
	return out
}
