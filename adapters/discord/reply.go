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

	// The renderer goroutine owns these: the reply's messages, and the
	// text last shown in them.
	out   *bot.Renderer[*posted]
	shown string
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
		r.out, r.shown = nil, ""
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
	r.out = bot.NewRenderer[*posted](replyMessages{r}, bot.RenderOptions{
		MaxLen:       r.sp.limit(),
		EditInterval: r.a.tuning.editInterval,
		Log:          r.a.log.With("channel_id", r.pl.channelID),
	})
	go r.render(ctx)
}

func (r *reply) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// render shows the text as it grows, then delivers the final text (or takes
// everything back) and reports the outcome on r.result. The renderer does
// the splitting, pacing and clean-up; this loop wakes it.
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
			r.result <- r.out.TakeBack(ctx)
			return
		case final:
			r.result <- r.out.Finish(ctx, text)
			return
		case text == r.shown:
			continue
		}
		if wait := r.out.Show(ctx, text); wait > 0 {
			if tick == nil {
				tick = time.After(wait)
			}
			continue
		}
		r.shown = text
	}
}

// replyMessages writes a reply's pieces as Discord messages at its place,
// in its speaker's name, for the renderer.
type replyMessages struct{ r *reply }

var _ bot.Messages[*posted] = replyMessages{}

// Post posts piece i. A final piece is retried, and when the webhook keeps
// failing it is posted once more as the bot.
func (m replyMessages) Post(ctx context.Context, i int, piece string, final bool) (*posted, error) {
	r := m.r
	if !final {
		return r.a.post(ctx, r.s, r.pl, r.sp, piece, i == 0, false)
	}
	var p *posted
	try := func(asBot bool) error {
		return r.a.retry(ctx, func() error {
			var err error
			p, err = r.a.post(ctx, r.s, r.pl, r.sp, piece, i == 0, asBot)
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

// Edit shows piece in p; a final edit is retried.
func (m replyMessages) Edit(ctx context.Context, p *posted, _ int, piece string, final bool) error {
	r := m.r
	edit := func() error { return r.a.edit(ctx, r.s, r.pl, p, piece) }
	var err error
	if final {
		err = r.a.retry(ctx, edit)
	} else {
		err = edit()
	}
	if err == nil {
		p.at = time.Now()
	}
	return err
}

// Delete deletes p; one already gone is no error.
func (m replyMessages) Delete(ctx context.Context, p *posted) error {
	if err := m.r.a.remove(ctx, m.r.s, m.r.pl, p); err != nil && !gone(err) {
		return err
	}
	return nil
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
