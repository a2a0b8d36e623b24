package record

// Event is an unrecorded plain event as the recorder is shown it.
type Event struct {
	ID      string
	Turn    int
	Actor   string
	Kind    Kind
	Text    string
	Present []string
}

// CastMember is a character the model plays in the chat.
type CastMember struct {
	Name string
	Away bool
}

// OpenThread is a thread still open, which the recorder may resolve.
type OpenThread struct {
	ID   string
	Kind string
	Text string
}

// Input is one recorder batch: what the prompt shows and what validation
// checks the answer against.
type Input struct {
	Cast []CastMember
	// Players are the users' characters in the chat (by persona name).
	Players  []string
	Ledger   Ledger
	Entities []Entity
	Threads  []OpenThread
	Events   []Event
	// Last is the story time of the last recorded turn; the answer may not
	// go back before it.
	Last StoryTime
	// Fading off: no partial or mistaken perceptions are asked for.
	Fading bool
}

func (in Input) turns() map[int]bool {
	m := map[int]bool{}
	for _, e := range in.Events {
		m[e.Turn] = true
	}
	return m
}

func (in Input) events() map[string]Event {
	m := map[string]Event{}
	for _, e := range in.Events {
		m[e.ID] = e
	}
	return m
}

func (in Input) cast() map[string]bool {
	m := map[string]bool{}
	for _, c := range in.Cast {
		m[c.Name] = true
	}
	return m
}
