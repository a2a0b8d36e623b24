package belief

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MaxCheckPerceptions caps the perceptions one belief check shows: the most
// related ones, in turn order.
const MaxCheckPerceptions = 12

// aboutWeight makes a shared person or thing count more than a shared word.
const aboutWeight = 2

// Check is one belief-check request: a belief and the new perceptions most
// related to it, all newer than the belief.
type Check struct {
	Belief      Belief
	Perceptions []Perception
}

// CheckInput is what SelectChecks chooses from.
type CheckInput struct {
	// Beliefs are the character's beliefs.
	Beliefs []Belief
	// New are the perceptions the coming reflection shows.
	New []Perception
	// Known are the character's other perceptions (those also in New count
	// once). They only count for how rare a word or a name is; they are
	// never shown. Ignored when Corpus is set.
	Known []Perception
	// Corpus, when set, already counts all the character's perceptions and
	// beliefs, New and Beliefs included; SelectChecks then reads no other
	// text than New and Beliefs.
	Corpus *Corpus
	// Max is reflection.max_checks: how many beliefs are checked against
	// the new perceptions before one reflection; 0 or less, none.
	Max int
}

// SelectChecks picks the beliefs most related to the new perceptions, at
// most Max, most related first. Two texts relate by the people and things
// they are about and by the rare words they share; what is common across the
// character's perceptions and beliefs (the name every perception shares)
// relates nothing. CJK text is matched by character bigrams. A belief is
// only checked against perceptions newer than its last change.
func SelectChecks(in CheckInput) []Check {
	limit := in.Max
	if limit <= 0 {
		return nil
	}
	var out []Check
	for _, c := range relate(in, true) {
		if c.score <= 0 || len(out) == limit {
			break
		}
		out = append(out, c.check)
	}
	return out
}

func aboutSet(about []string) map[string]bool {
	out := map[string]bool{}
	for _, a := range about {
		if a = strings.ToLower(strings.Join(strings.Fields(a), " ")); a != "" {
			out[a] = true
		}
	}
	return out
}

func inAll(sets []map[string]bool) map[string]bool {
	out := map[string]bool{}
	for t := range sets[0] {
		all := true
		for _, s := range sets[1:] {
			if !s[t] {
				all = false
				break
			}
		}
		if all {
			out[t] = true
		}
	}
	return out
}

// CheckAnswer is the model's answer to one belief check.
type CheckAnswer struct {
	Compatible bool `json:"compatible"`
	Against    IDs  `json:"against"`
}

// ParseCheck reads a belief-check answer, tolerating code fences and text
// around the object. A missing "compatible" means compatible unless
// "against" names perceptions. The error, wrapping ErrAnswer, is for an
// answer with no JSON object, or one with neither key or a "compatible" that
// is not a yes or no.
func ParseCheck(text string) (CheckAnswer, error) {
	obj, err := jsonObject(text)
	if err != nil {
		return CheckAnswer{}, err
	}
	var a CheckAnswer
	rawC, hasC := obj["compatible"]
	rawA, hasA := obj["against"]
	if !hasC && !hasA {
		return CheckAnswer{}, fmt.Errorf("%w: neither compatible nor against", ErrAnswer)
	}
	if hasA {
		if err := json.Unmarshal(rawA, &a.Against); err != nil {
			return CheckAnswer{}, fmt.Errorf("%w: against is not a list of ids", ErrAnswer)
		}
	}
	if !hasC {
		a.Compatible = len(a.Against) == 0
		return a, nil
	}
	var v any
	if err := json.Unmarshal(rawC, &v); err != nil {
		return CheckAnswer{}, fmt.Errorf("%w: compatible is not true or false", ErrAnswer)
	}
	switch x := v.(type) {
	case bool:
		a.Compatible = x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes":
			a.Compatible = true
		case "false", "no":
			a.Compatible = false
		default:
			return CheckAnswer{}, fmt.Errorf("%w: compatible is not true or false", ErrAnswer)
		}
	default:
		return CheckAnswer{}, fmt.Errorf("%w: compatible is not true or false", ErrAnswer)
	}
	return a, nil
}

// ApplyCheck records a check's answer as doubt: when the answer names
// perceptions of the check that contradict the belief and are not yet linked
// as contradicting it, the belief goes one level down (never below
// doubtful), those perceptions are linked as contradicting, and ChangedTurn
// moves to the newest of them. It returns the belief after the answer and
// whether doubt was recorded (the belief then counts as doubted this round,
// see Round.Doubted). A (belief, perception) contradiction is recorded
// once, so applying the same answer again (a retried run) changes nothing.
// An answer that says compatible, or names no perception of the check,
// changes nothing either.
func ApplyCheck(c Check, a CheckAnswer) (Belief, bool) {
	b := c.Belief.clone()
	if a.Compatible {
		return b, false
	}
	var fresh []Perception
	for _, id := range uniq(a.Against) {
		i := slices.IndexFunc(c.Perceptions, func(p Perception) bool { return p.ID == id })
		if i < 0 || b.links(id, Contradicts) || b.links(id, Supports) {
			continue
		}
		fresh = append(fresh, c.Perceptions[i])
	}
	if len(fresh) == 0 {
		return b, false
	}
	b.Confidence = b.Confidence.Down()
	b.Evidence = link(b.Evidence, fresh, Contradicts)
	b.ChangedTurn = max(b.ChangedTurn, maxTurn(fresh))
	return b, true
}

// CheckResult is one check and the model's parsed answer to it.
type CheckResult struct {
	Check  Check
	Answer CheckAnswer
}

// ApplyChecks applies a round's check answers to a character's beliefs. It
// returns all the beliefs with the doubt recorded (what the reflection
// request shows, and Round.Beliefs) and the beliefs the checks lowered
// (to install, and whose ids are Round.Doubted).
func ApplyChecks(beliefs []Belief, results []CheckResult) (after, doubted []Belief) {
	after = slices.Clone(beliefs)
	for _, r := range results {
		i := slices.IndexFunc(after, func(b Belief) bool { return b.ID == r.Check.Belief.ID })
		if i < 0 {
			continue
		}
		c := r.Check
		c.Belief = after[i] // an earlier answer for the same belief counts
		b, ok := ApplyCheck(c, r.Answer)
		if !ok {
			continue
		}
		after[i] = b
		if j := slices.IndexFunc(doubted, func(d Belief) bool { return d.ID == b.ID }); j >= 0 {
			doubted[j] = b
		} else {
			doubted = append(doubted, b)
		}
	}
	return after, doubted
}
