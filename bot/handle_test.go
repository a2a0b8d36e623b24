package bot_test

import (
	"context"
	"fmt"

	"troupe/bot"
)

// handle drives one message through the production path, as an adapter
// does: Submit (which first decides whether the channel plays), then a wait
// on the Receipt until the turn that took the message is done. It returns
// how that turn ended. A message the channel ignores is an error, so a test
// cannot pass on a message no character heard: a test's channel plays the
// way it would in production (a direct or local channel, or one bound to a
// card).
func handle(ctx context.Context, p *bot.Pipeline, in bot.Inbound, sink bot.Sink) error {
	rc := p.Submit(ctx, bot.Event{In: in}, sink)
	if rc.Ignored() {
		return fmt.Errorf("message %q in %s ignored: the channel does not play", in.MessageID, in.Channel.Key())
	}
	return rc.Wait(ctx)
}
