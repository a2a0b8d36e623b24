package bot

// Revise replaces the text of a message still waiting for its turn (a user
// edited it before the reply started). It reports whether one was waiting.
func (p *Pipeline) Revise(in Inbound) bool {
	if in.MessageID == "" {
		return false
	}
	l := p.lane(in.Channel.Key())
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.pending {
		if l.pending[i].in.MessageID == in.MessageID && l.pending[i].in.AuthorID == in.AuthorID {
			l.pending[i].in.Text = in.Text
			return true
		}
	}
	return false
}
