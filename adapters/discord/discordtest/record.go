package discordtest

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Call is one REST request the server received.
type Call struct {
	Method string
	// Path is the path under /api/v10, such as /channels/1/messages.
	Path  string
	Query url.Values
	Body  []byte
	// Status is what the server answered.
	Status int
	At     time.Time
}

// Route is the call's method and path, as in "POST /channels/1/messages".
func (c Call) Route() string { return c.Method + " " + c.Path }

// Calls returns every REST call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the calls whose route matches pattern, where "*" matches
// one path segment: "PATCH /webhooks/*/*/messages/*".
func (s *Server) CallsTo(pattern string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if match(pattern, c.Method, c.Path) {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) record(r *http.Request, body []byte, status int) {
	p := strings.TrimPrefix(r.URL.Path, "/api/v10")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: p, Query: r.URL.Query(), Body: body, Status: status, At: time.Now()})
}

// match reports whether method and path fit pattern ("METHOD /a/*/c").
func match(pattern, method, p string) bool {
	pm, pp, ok := strings.Cut(pattern, " ")
	if !ok || (pm != "*" && pm != method) {
		return false
	}
	want := strings.Split(strings.Trim(pp, "/"), "/")
	got := strings.Split(strings.Trim(p, "/"), "/")
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i] != "*" && want[i] != got[i] {
			return false
		}
	}
	return true
}

// Message is a message as the server holds it.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string
	Content   string
	// AuthorID is the user, or the webhook for webhook messages.
	AuthorID  string
	Username  string
	AvatarURL string
	// WebhookAvatar is the avatar of the webhook that posted it, shown
	// when the message gives no AvatarURL.
	WebhookAvatar string
	// WebhookID is the webhook that posted it; for interaction responses,
	// the application id.
	WebhookID string
	Bot       bool
	Flags     int
	Ephemeral bool
	// Interaction is the token of the interaction this message answers.
	Interaction string
	// Loading is true for a deferred response not yet edited.
	Loading    bool
	Components json.RawMessage
	ReplyTo    string
	Created    time.Time
	// Edits are the times of the message's edits.
	Edits   []time.Time
	Deleted bool
	// Attachments are the message's files: a user's as the test posted
	// them, the client's as it uploaded them (name, content type, bytes),
	// each with its CDN URLs.
	Attachments []Attachment
	// Embeds are a user's message's embeds, as the test posted them.
	Embeds []Embed
	// embeds are Embeds as Discord sends them, made when posted.
	embeds []obj
}

// Messages returns the visible (not ephemeral, not deleted) messages of a
// channel in the order they were created.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.order {
		m := s.messages[id]
		if m.ChannelID == channelID && !m.Deleted && !m.Ephemeral && !m.Loading {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns a message by id, deleted or not.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// limit answers the next times calls matching route with 429 (or, with a
// status, that error).
type limit struct {
	route      string
	times      int
	retryAfter time.Duration
	global     bool
	status     int
}

// RateLimit makes the next times calls matching route (see CallsTo) answer
// 429 Too Many Requests with retry_after, Retry-After and the X-RateLimit-*
// headers Discord sends.
func (s *Server) RateLimit(route string, times int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = append(s.limits, &limit{route: route, times: times, retryAfter: retryAfter})
}

// Fail makes the next times calls matching route answer status (a 5xx, a
// 403 Missing Permissions, …) with Discord's error body.
func (s *Server) Fail(route string, times, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = append(s.limits, &limit{route: route, times: times, status: status})
}

// limited answers 429 (or an injected failure) if one applies to r.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, p string) bool {
	s.mu.Lock()
	var l *limit
	for _, x := range s.limits {
		if x.times > 0 && match(x.route, r.Method, p) {
			x.times--
			l = x
			break
		}
	}
	s.mu.Unlock()
	if l == nil {
		return false
	}
	if l.status != 0 {
		code := 0
		if l.status == http.StatusForbidden {
			code = 50013
		}
		writeError(w, l.status, code, http.StatusText(l.status))
		return true
	}
	secs := l.retryAfter.Seconds()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(time.Now().Add(l.retryAfter).UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
	h.Set("X-RateLimit-Bucket", "b2f9e5c1d3a7")
	h.Set("X-RateLimit-Scope", "user")
	if l.global {
		h.Set("X-RateLimit-Global", "true")
	}
	body := s.sample("rest/rate_limited")
	body["retry_after"] = secs
	body["global"] = l.global
	writeJSON(w, http.StatusTooManyRequests, body)
	return true
}

// Commands returns the names of the application commands registered
// globally (guildID "") or in a guild, sorted.
func (s *Server) Commands(guildID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, raw := range s.commands[guildID] {
		var c struct{ Name string }
		_ = json.Unmarshal(raw, &c)
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names
}

// RegisteredCommand returns the registered definition of a command as JSON.
func (s *Server) RegisteredCommand(guildID, name string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, raw := range s.commands[guildID] {
		var c struct{ Name string }
		_ = json.Unmarshal(raw, &c)
		if c.Name == name {
			return raw, true
		}
	}
	return nil, false
}

// webhook is a channel webhook.
type webhook struct {
	id, token, channelID, guildID, name string
	// avatar is the data URI the webhook was made or last changed with.
	avatar string
	byApp  bool
}

// WebhookInfo is a webhook as the server holds it.
type WebhookInfo struct {
	ID, Name string
	// Avatar is the data URI it was made or last changed with.
	Avatar string
}

// WebhookInfos returns the webhooks of a channel, by id.
func (s *Server) WebhookInfos(channelID string) []WebhookInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []WebhookInfo
	for _, w := range s.webhooks {
		if w.channelID == channelID {
			out = append(out, WebhookInfo{ID: w.id, Name: w.name, Avatar: w.avatar})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Webhooks returns the ids of the webhooks of a channel.
func (s *Server) Webhooks(channelID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range s.webhooks {
		if w.channelID == channelID {
			out = append(out, w.id)
		}
	}
	sort.Strings(out)
	return out
}
