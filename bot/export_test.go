package bot

import "context"

// AdmitOnly stores in in the inbox as a message's own call does, without
// queueing its turn: the state between the two that another turn of the
// channel (or another process's) may find it in.
func (p *Pipeline) AdmitOnly(ctx context.Context, in Inbound) error {
	_, err := p.accept(ctx, in)
	return err
}

// AdmitThenQueue stores in in the inbox as Submit does and returns the
// rest of Submit, which queues its turn: a test can run it after another
// message's Submit, as a call preempted between the two would.
func (p *Pipeline) AdmitThenQueue(ctx context.Context, in Inbound, sink Sink) (queue func() Receipt, err error) {
	if err := p.begin(); err != nil {
		return nil, err
	}
	id, ok, err := p.admit(ctx, in, sink)
	if !ok {
		p.wg.Done()
		if err == nil {
			err = ErrNotStored
		}
		return nil, err
	}
	return func() Receipt {
		r := newReceipt()
		r.admit(nil)
		p.start(ctx, pendingMsg{in: in, sink: sink, inboxID: id, done: r.finish})
		return r
	}, nil
}
