package main

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"troupe/fakes/openaitest"
)

// benchChannelMark finds the channel a bench turn's user message comes
// from: drive writes "Beat N [channel]:".
var benchChannelMark = regexp.MustCompile(`Beat \d+ \[(\d+)\]:`)

// prefixReuse measures, per channel, how much of each chat prompt starts
// with the same bytes as the channel's previous one: the part a provider's
// prompt cache can reuse. Only the recall block and the new message should
// differ, since they come last.
type prefixReuse struct {
	mu     sync.Mutex
	prev   map[string]string
	shares []float64
}

// observe takes one request that reached the fake as a chat turn. Only a
// roleplay prompt counts: it has the chat's history (an assistant message
// at least, the card's greeting) and ends with the turn's user message,
// or with system text after it (a card's post-history instructions); a
// side-model prompt that quotes a user line (reflection's) does not.
func (p *prefixReuse) observe(msgs []openaitest.Message) {
	last := len(msgs) - 1
	for last >= 0 && msgs[last].Role == "system" {
		last--
	}
	if last < 1 || msgs[last].Role != "user" ||
		!slices.ContainsFunc(msgs[:last], func(m openaitest.Message) bool { return m.Role == "assistant" }) {
		return
	}
	m := benchChannelMark.FindAllStringSubmatch(msgs[last].Content, -1)
	if m == nil {
		return
	}
	channel := m[len(m)-1][1]
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role)
		b.WriteByte('\n')
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	next := b.String()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prev == nil {
		p.prev = map[string]string{}
	}
	if prev, ok := p.prev[channel]; ok {
		p.shares = append(p.shares, commonPrefixShare(prev, next))
	}
	p.prev[channel] = next
}

// median returns the median share and how many turn pairs it is over.
func (p *prefixReuse) median() (float64, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.shares) == 0 {
		return 0, 0
	}
	s := slices.Clone(p.shares)
	slices.Sort(s)
	return s[len(s)/2], len(s)
}

// commonPrefixShare is the share of next's bytes that start with the same
// bytes as prev.
func commonPrefixShare(prev, next string) float64 {
	if next == "" {
		return 0
	}
	n := 0
	for n < len(prev) && n < len(next) && prev[n] == next[n] {
		n++
	}
	return float64(n) / float64(len(next))
}
