package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"troupe/models"
)

// resumeWindow is how far back Resume looks for chats left on an
// unanswered message: older ones were given up on by their users.
const resumeWindow = time.Hour

// accept stores in in the store's inbox, where it waits for its turn, and
// returns its row id; a second delivery of a message already waiting
// stores nothing and returns "".
func (p *Pipeline) accept(ctx context.Context, in Inbound) (string, error) {
	ref, err := json.Marshal(in.Channel)
	if err != nil {
		return "", fmt.Errorf("bot: accept: %w", err)
	}
	m := &models.InboxMessage{ChannelID: in.Channel.Key(), Platform: in.Channel.Platform, Ref: string(ref),
		AuthorID: in.AuthorID, AuthorName: storable(in.AuthorName), Content: storable(in.Text),
		Addressed: storable(strings.Join(in.Addressed, "\n"))}
	if in.MessageID != "" {
		k := dedupKey(in)
		m.DedupKey = &k
	}
	stored, err := p.opt.Store.Accept(ctx, m)
	if err != nil || !stored {
		return "", err
	}
	return m.ID, nil
}

// inboxSweepAge is how old a waiting message must be before the inbox sweep
// takes it: younger ones belong to a live process that is about to store
// them.
const inboxSweepAge = 30 * time.Second

// Resume answers, in the channels of platform that this process serves,
// what a process that stopped (killed, crashed, cut off at shutdown) left
// behind: messages accepted but not yet stored in their chat, and chats
// active in the last hour that end on a stored but unanswered user message.
// sinkFor returns the sink a channel's answer goes to, false for a channel
// this process does not serve. Each channel's turn runs as a message's
// would, after the channel's lock (a dead holder's expires within seconds);
// Resume returns once they are started. From then on, until Close, the
// pipeline also sweeps the inbox every Options.InboxSweep for messages a
// process that died left while this one ran. Errors come back when the
// store cannot be read or the pipeline is closed.
func (p *Pipeline) Resume(ctx context.Context, platform string, sinkFor func(ChannelRef) (Sink, bool)) error {
	if err := p.begin(); err != nil {
		return err
	}
	defer p.wg.Done()
	p.mu.Lock()
	p.sinkFor[platform] = sinkFor
	if !p.sweeping {
		p.sweeping = true
		p.wg.Add(1)
		go p.sweepInbox(ctx)
	}
	p.mu.Unlock()
	waiting, err := p.opt.Store.InboxChannels(ctx, platform, p.opt.Now().Add(time.Minute))
	if err != nil {
		return fmt.Errorf("bot: resume: %w", err)
	}
	unanswered, err := p.opt.Store.UnansweredChannels(ctx, platform, p.opt.Now().Add(-resumeWindow))
	if err != nil {
		return fmt.Errorf("bot: resume: %w", err)
	}
	todo := p.waitingChannels(waiting)
	for _, u := range unanswered {
		ref := ChannelRef{Platform: platform, ID: u.External, SpaceKind: u.SpaceKind, SpaceID: u.SpaceExternal,
			Group: groupSpace(u.SpaceKind)}
		todo = append(todo, Inbound{Channel: ref, AuthorID: u.AuthorID, AuthorName: u.AuthorName})
	}
	return p.resumeChannels(ctx, todo, sinkFor, true)
}

// waitingChannels turns the oldest waiting message of each channel into
// the inbound a resumed turn runs with.
func (p *Pipeline) waitingChannels(waiting []models.InboxMessage) []Inbound {
	var todo []Inbound
	for _, m := range waiting {
		var ref ChannelRef
		if err := json.Unmarshal([]byte(m.Ref), &ref); err != nil || ref.Key() != m.ChannelID {
			p.log.Error("resume: unreadable channel of a waiting message", "channel", m.ChannelID, "err", err)
			continue
		}
		todo = append(todo, Inbound{Channel: ref, AuthorID: m.AuthorID, AuthorName: m.AuthorName})
	}
	return todo
}

// resumeChannels starts a turn without a new message in each channel of
// todo that sinkFor serves.
func (p *Pipeline) resumeChannels(ctx context.Context, todo []Inbound, sinkFor func(ChannelRef) (Sink, bool), answerHead bool) error {
	seen := map[string]bool{}
	for _, in := range todo {
		key := in.Channel.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		sink, ok := sinkFor(in.Channel)
		if !ok {
			continue
		}
		if err := p.begin(); err != nil {
			return err
		}
		p.log.Info("resuming a channel left unanswered", "channel", key)
		go func() {
			defer p.wg.Done()
			if err := p.drive(ctx, pendingMsg{in: in, sink: sink, resume: true, answerHead: answerHead}); err != nil {
				p.log.Warn("resume channel", "channel", key, "err", err)
			}
		}()
	}
	return nil
}

// sweepInbox picks up, every InboxSweep until Close or until ctx (the
// resuming adapter's; the next Resume starts it again) ends, the messages
// that have waited in the inbox longer than inboxSweepAge in the channels
// of the platforms Resume was called for: a process that died while this
// one kept running left them, and no new message may come to its channel.
func (p *Pipeline) sweepInbox(ctx context.Context) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		p.sweeping = false
		p.mu.Unlock()
	}()
	t := time.NewTicker(p.opt.InboxSweep)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		sinks := make(map[string]func(ChannelRef) (Sink, bool), len(p.sinkFor))
		for k, v := range p.sinkFor {
			sinks[k] = v
		}
		p.mu.Unlock()
		for platform, sinkFor := range sinks {
			waiting, err := p.opt.Store.InboxChannels(ctx, platform, p.opt.Now().Add(-inboxSweepAge))
			if err != nil {
				p.log.Warn("sweep the inbox", "platform", platform, "err", err)
				continue
			}
			if err := p.resumeChannels(ctx, p.waitingChannels(waiting), sinkFor, false); err != nil {
				return
			}
		}
	}
}

// revise replaces the text of a message still waiting for its turn (a user
// edited it before the reply started). It reports whether one was waiting.
func (p *Pipeline) revise(in Inbound) bool {
	if in.MessageID == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := p.opt.Store.ReviseInbox(ctx, dedupKey(in), in.AuthorID, storable(in.Text))
	if err != nil {
		p.log.Warn("revise waiting message", "channel", in.Channel.Key(), "err", err)
	}
	return ok
}
