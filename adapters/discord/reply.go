package discord

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

// reply is the bot.Sink of one message: it shows the typing indicator,
// streams the character's text into messages at pl (posting the first text at
// once, then editing at most once per editInterval), and posts notices.
type reply struct {
	a  *Adapter
	s  *discordgo.Session
	pl place
	sp speaker
	// ref is the user's message that notices answer; may be nil.
	ref *discordgo.Message

	mu        sync.Mutex
	text      string
	final     bool
	retract   bool
	rendering bool
	done      bool
	typing    chan struct{}
	noTyping  bool
	wake      chan struct{}
	result    chan error
	// swipes, when the pipeline offered them, are the buttons the reply
	// gets once delivered.
	swipes *bot.Swipes

	// The renderer goroutine owns these.
	sent      []*posted
	shown     string
	lastFlush time.Time
}

var (
	_ bot.Sink     = (*reply)(nil)
	_ bot.Speaking = (*reply)(nil)
)

// Speak sets who the character text that follows is written as. After a
// finished reply it starts the next one (a scene's next speaker): its own
// webhook messages, streamed and split on their own.
func (r *reply) Speak(_ context.Context, sp bot.Speaker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		// The renderer of the reply before has returned (Finish or Notice
		// read its result), so its state is free to reuse.
		r.text, r.final, r.retract, r.rendering, r.done = "", false, false, false, false
		r.typing, r.noTyping = nil, false
		r.result = make(chan error, 1)
		r.sent, r.shown, r.lastFlush = nil, "", time.Time{}
		r.swipes = nil
	}
	r.sp = speakerOf(sp)
}

func (a *Adapter) newReply(s *discordgo.Session, pl place) *reply {
	return &reply{a: a, s: s, pl: pl, wake: make(chan struct{}, 1), result: make(chan error, 1)}
}

// typingFor bounds the typing indicator of one reply.
const typingFor = 2 * time.Minute

// Typing shows the typing indicator until the first text, a notice, or two
// minutes.
func (r *reply) Typing(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.typing != nil || r.noTyping || r.rendering {
		return
	}
	stop := make(chan struct{})
	r.typing = stop
	go bot.KeepDoing(ctx, stop, r.a.tuning.typingEvery, typingFor, func() {
		if err := r.s.ChannelTyping(r.pl.channelID, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
			r.a.log.Debug("typing indicator", "channel_id", r.pl.channelID, "err", err)
		}
	})
}

// stopTyping ends the indicator; it must be called with r.mu held.
func (r *reply) stopTyping() {
	if r.typing != nil && !r.noTyping {
		close(r.typing)
	}
	r.noTyping = true
}

// Update takes the reply so far; the renderer shows it when it may.
func (r *reply) Update(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	r.mu.Lock()
	if r.final || r.retract {
		r.mu.Unlock()
		return nil
	}
	r.text = text
	r.startLocked(ctx)
	r.mu.Unlock()
	r.signal()
	return nil
}

// Finish shows the final text and returns once every piece is posted, or
// with the error that kept one from being posted (after a short notice in
// the channel when that is still possible).
func (r *reply) Finish(ctx context.Context, text string) error {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return nil
	}
	r.text, r.final = text, true
	r.startLocked(ctx)
	r.mu.Unlock()
	r.signal()
	err := <-r.result
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	if err != nil {
		r.a.undelivered(ctx, r.s, r.pl, r.sp, err)
		return err
	}
	r.buttons()
	return nil
}

// Notice posts troupe's message as the bot. Text streamed before it (a reply
// the model broke off) is taken back first: it was not stored.
func (r *reply) Notice(ctx context.Context, text string) error {
	r.mu.Lock()
	r.stopTyping()
	wait := r.rendering && !r.done
	if wait {
		r.retract = true
	}
	r.mu.Unlock()
	if wait {
		r.signal()
		if err := <-r.result; err != nil {
			r.a.log.Warn("take back a broken-off reply", "channel_id", r.pl.channelID, "err", err)
		}
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
	}
	err := r.a.notice(ctx, r.s, r.pl, r.ref, text)
	if err != nil {
		r.a.log.Error("post notice", "channel_id", r.pl.channelID, "err", err)
	}
	return err
}

// startLocked starts the renderer once; r.mu must be held.
func (r *reply) startLocked(ctx context.Context) {
	r.stopTyping()
	if r.rendering {
		return
	}
	r.rendering = true
	go r.render(ctx)
}

func (r *reply) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// render shows the text as it grows, then delivers the final text (or takes
// everything back) and reports the outcome on r.result.
func (r *reply) render(ctx context.Context) {
	var tick <-chan time.Time
	for {
		select {
		case <-r.wake:
		case <-tick:
			tick = nil
		case <-ctx.Done():
			r.result <- ctx.Err()
			return
		}
		r.mu.Lock()
		text, final, retract := r.text, r.final, r.retract
		r.mu.Unlock()
		switch {
		case retract:
			r.result <- r.takeBack(ctx)
			return
		case final:
			r.result <- r.deliver(ctx, text)
			return
		case text == r.shown:
			continue
		}
		if due := r.lastFlush.Add(r.a.tuning.editInterval); len(r.sent) > 0 && time.Now().Before(due) {
			if tick == nil {
				tick = time.After(time.Until(due))
			}
			continue
		}
		r.flush(ctx, text)
	}
}

// flush shows text as it is now: edits of the pieces that changed and posts
// of new ones. Failures are left for the final delivery to repair.
func (r *reply) flush(ctx context.Context, text string) {
	for i, piece := range bot.Split(text, r.sp.limit()) {
		if i < len(r.sent) {
			p := r.sent[i]
			if p.content == piece {
				continue
			}
			if err := r.a.edit(ctx, r.s, r.pl, p, piece); err != nil {
				r.a.log.Debug("stream edit", "channel_id", r.pl.channelID, "err", err)
				continue
			}
			p.content, p.at = piece, time.Now()
			continue
		}
		p, err := r.a.post(ctx, r.s, r.pl, r.sp, piece, i == 0, false)
		if err != nil {
			r.a.log.Debug("stream post", "channel_id", r.pl.channelID, "err", err)
			break
		}
		r.sent = append(r.sent, p)
	}
	r.shown = text
	r.lastFlush = time.Now()
}

// deliver makes the posted messages show exactly the final text's pieces,
// in order, each edit at least editInterval after the last write of its
// message. A message that cannot be edited is replaced by a new one.
func (r *reply) deliver(ctx context.Context, text string) error {
	pieces := bot.Split(text, r.sp.limit())
	for i, piece := range pieces {
		if i < len(r.sent) {
			p := r.sent[i]
			if p.content == piece {
				continue
			}
			if wait := time.Until(p.at.Add(r.a.tuning.editInterval)); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			err := r.a.retry(ctx, func() error { return r.a.edit(ctx, r.s, r.pl, p, piece) })
			if err == nil {
				p.content, p.at = piece, time.Now()
				continue
			}
			r.a.log.Warn("final edit failed; posting the piece anew", "channel_id", r.pl.channelID, "err", err)
		}
		p, err := r.postPiece(ctx, piece, i == 0)
		if err != nil {
			return err
		}
		if i < len(r.sent) {
			r.sent[i] = p
		} else {
			r.sent = append(r.sent, p)
		}
	}
	for _, p := range r.sent[min(len(pieces), len(r.sent)):] {
		if err := r.a.remove(ctx, r.s, r.pl, p); err != nil {
			r.a.log.Warn("remove a surplus reply message", "channel_id", r.pl.channelID, "err", err)
		}
	}
	r.sent = r.sent[:min(len(pieces), len(r.sent))]
	return nil
}

// postPiece posts one piece of the final text, with retries; when the
// webhook keeps failing it tries once more as the bot.
func (r *reply) postPiece(ctx context.Context, piece string, first bool) (*posted, error) {
	var p *posted
	try := func(asBot bool) error {
		return r.a.retry(ctx, func() error {
			var err error
			p, err = r.a.post(ctx, r.s, r.pl, r.sp, piece, first, asBot)
			return err
		})
	}
	err := try(false)
	if err != nil && ctx.Err() == nil && !r.pl.dm() {
		r.a.log.Warn("posting through the webhook failed; posting as the bot", "channel_id", r.pl.channelID, "err", err)
		err = try(true)
	}
	return p, err
}

// takeBack deletes what was streamed.
func (r *reply) takeBack(ctx context.Context) error {
	var first error
	for _, p := range r.sent {
		if err := r.a.remove(ctx, r.s, r.pl, p); err != nil && first == nil && !gone(err) {
			first = err
		}
	}
	r.sent = nil
	return first
}

// undelivered reports a reply that could not be posted: in the log with the
// channel (the pipeline logs the chat) and, when possible, in the channel.
func (a *Adapter) undelivered(ctx context.Context, s *discordgo.Session, pl place, sp speaker, err error) {
	a.log.Error("reply not delivered", "channel_id", pl.channelID, "guild_id", pl.guildID, "err", err)
	if ctx.Err() != nil {
		return
	}
	if nerr := a.notice(ctx, s, pl, nil, text(sp.lang, txtUndelivered)); nerr != nil {
		a.log.Error("notice of an undelivered reply", "channel_id", pl.channelID, "err", nerr)
	}
}
