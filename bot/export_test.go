package bot

import "context"

// AdmitOnly stores in in the inbox as a message's own call does, without
// queueing its turn: the state between the two that another turn of the
// channel (or another process's) may find it in.
func (p *Pipeline) AdmitOnly(ctx context.Context, in Inbound) error {
	_, err := p.accept(ctx, in)
	return err
}
