package bot

import "context"

// AdmitOnly stores in in the inbox as a message's own call does, without
// queueing its turn: the state between the two that another turn of the
// channel (or another process's) may find it in.
func (p *Pipeline) AdmitOnly(ctx context.Context, in Inbound) error {
	_, err := p.accept(ctx, in)
	return err
}

// AdmitThenQueue stores in in the inbox as Submit does and returns its
// receipt and what queues its turn, which Submit runs at once: a test can
// run it after another message's Submit, as a call preempted between the
// two would.
func (p *Pipeline) AdmitThenQueue(ctx context.Context, in Inbound, sink Sink) (Receipt, func()) {
	r := newReceipt()
	if err := p.begin(); err != nil {
		r.finish(err)
		return r, func() {}
	}
	return r, p.store(ctx, in, sink, r)
}
