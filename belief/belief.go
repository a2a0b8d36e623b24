package belief

// Perception is one character's own version of an event, as reflection sees
// it. Turn is the space's sequence number of the turn it came from: beliefs
// span the chats of a space, so "newer" compares these numbers.
type Perception struct {
	ID   string `json:"id"`
	Turn int64  `json:"turn"`
	Text string `json:"text"`
	// Importance and Pivotal are those of the perceived event (1–10, and
	// whether the recorder marked it as turning the story).
	Importance int      `json:"importance"`
	Pivotal    bool     `json:"pivotal"`
	About      []string `json:"about,omitempty"`
}

// Stance says whether a perception speaks for or against a belief.
type Stance string

// The two stances of an evidence link.
const (
	Supports    Stance = "supports"
	Contradicts Stance = "contradicts"
)

// Evidence links a belief to one perception. Turn is the perception's turn,
// kept with the link so rules about distinct turns work without reloading
// perceptions that are no longer new.
type Evidence struct {
	Perception string `json:"perception"`
	Turn       int64  `json:"turn"`
	Stance     Stance `json:"stance"`
}

// Belief is what a character has come to hold beyond single events.
type Belief struct {
	ID         string     `json:"id"`
	Text       string     `json:"text"`
	Confidence Confidence `json:"confidence"`
	About      []string   `json:"about,omitempty"`
	// FormedTurn and ChangedTurn are space turns: the newest perception the
	// belief was formed from, and the newest it was last changed by. Only a
	// perception newer than ChangedTurn may change or drop it.
	FormedTurn  int64      `json:"formed_turn"`
	ChangedTurn int64      `json:"changed_turn"`
	Evidence    []Evidence `json:"evidence,omitempty"`
	// MergedFrom names the beliefs a merge replaced (they are deleted).
	MergedFrom []string `json:"merged_from,omitempty"`
}

// links reports whether b already has a link of that stance to perception p.
func (b Belief) links(p string, s Stance) bool {
	for _, e := range b.Evidence {
		if e.Perception == p && e.Stance == s {
			return true
		}
	}
	return false
}

// supportTurns counts the distinct turns of b's supporting perceptions.
func (b Belief) supportTurns() int {
	turns := map[int64]bool{}
	for _, e := range b.Evidence {
		if e.Stance == Supports {
			turns[e.Turn] = true
		}
	}
	return len(turns)
}

// clone copies b's slices so changing the copy leaves b alone.
func (b Belief) clone() Belief {
	b.About = append([]string(nil), b.About...)
	b.Evidence = append([]Evidence(nil), b.Evidence...)
	b.MergedFrom = append([]string(nil), b.MergedFrom...)
	return b
}
