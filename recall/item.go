package recall

// Kind says whether an item is a perception or a belief.
type Kind string

// Item kinds.
const (
	Perception Kind = "perception"
	Belief     Kind = "belief"
)

// Source is how a candidate was found.
type Source string

// Sources of candidates; Association marks an item that came along with a
// picked one.
const (
	Cue         Source = "cue"
	Words       Source = "words"
	Vector      Source = "vector"
	Association Source = "association"
)

// MinutesPerDay converts story days to minutes.
const MinutesPerDay = 24 * 60

// Item is one thing a character may recall: its own perception of an event,
// or one of its beliefs.
type Item struct {
	ID   string
	Kind Kind
	// Text is the character's own version; Gist what is left when details
	// fade.
	Text, Gist string
	// Importance is 1–10.
	Importance int
	// StoryMinute is when it happened, in story minutes since day 0, on
	// its own chat's story clock.
	StoryMinute int64
	// Shift moves StoryMinute onto the turn's chat's story clock, which
	// fading and recency count on (At): 0 for an item of that chat and
	// for a belief. Each chat keeps a story clock of its own, so another
	// chat's day 3 says nothing of how long ago it is now.
	Shift int64
	// When is the story time as words ("day 3, evening").
	When string
	// Seq is the space turn it comes from (a belief's: when it last
	// changed); it orders items of the same story time.
	Seq int64
	// Recalls counts how often it was recalled before.
	Recalls int
	// FoldedInto is the belief a perception was folded into, if any.
	FoldedInto string
	// Mode is saw, heard, told or inferred; Via who told it.
	Mode, Via string
	// Confidence of a belief: doubtful, likely or sure.
	Confidence string
	// About are the people, places and things it concerns; Place where.
	About []string
	Place string
	// MessageID is the message whose events it comes from: an item whose
	// message is in the prompt verbatim is not recalled.
	MessageID string
}

// At is when the item happened on the turn's chat's story clock
// (StoryMinute moved by Shift).
func (it Item) At() int64 { return it.StoryMinute + it.Shift }

// Candidate is an item found for the current turn, with how it was found
// and its relevance (0–1) to the new messages.
type Candidate struct {
	Item
	Sources   []Source
	Relevance float64
}
