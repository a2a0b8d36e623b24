// Package console is the terminal adapter: an interactive chat with streaming
// output and the slash commands, or, when stdin is not a terminal, one message
// per input line and each reply printed whole, so scripts can drive it.
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"troupe/bot"
)

// Options configures a console session.
type Options struct {
	In  io.Reader
	Out io.Writer
	// User is the local user's name; it names the channel and the space.
	User string
	// CardID binds the session's channel to a card.
	CardID string
	// Interactive streams replies as they are written and shows a prompt.
	Interactive bool
}

// Session is one console conversation.
type Session struct {
	p   *bot.Pipeline
	opt Options
	mu  sync.Mutex
	// confirm holds a pending yes/no question's token.
	confirm string
	seq     int
}

// New returns a console session on the pipeline.
func New(p *bot.Pipeline, opt Options) *Session {
	if opt.User == "" {
		opt.User = "you"
	}
	return &Session{p: p, opt: opt}
}

// Channel is the console channel of the session: one per user and card, in
// the local user's space.
func (s *Session) Channel() bot.ChannelRef {
	return bot.ChannelRef{Platform: bot.PlatformConsole, ID: s.opt.User + "/" + s.opt.CardID, SpaceKind: bot.SpaceLocal, SpaceID: s.opt.User}
}

// Run reads lines until the input ends or ctx is done.
func (s *Session) Run(ctx context.Context) error {
	if err := s.p.Bind(ctx, s.Channel(), s.opt.CardID); err != nil {
		return err
	}
	if err := s.p.Greet(ctx, s.inbound(""), s.sink()); err != nil {
		return err
	}
	// What an earlier session accepted and never answered is answered now.
	own := s.Channel().Key()
	if err := s.p.Resume(ctx, bot.PlatformConsole, func(ref bot.ChannelRef) (bot.Sink, bool) {
		return s.sink(), ref.Key() == own
	}); err != nil {
		return err
	}
	sc := bufio.NewScanner(s.opt.In)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for {
		s.prompt()
		if !sc.Scan() {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := s.handle(ctx, line); err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.opt.Out, "! %v\n", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("console: read input: %w", err)
	}
	return nil
}

func (s *Session) handle(ctx context.Context, line string) error {
	s.mu.Lock()
	token := s.confirm
	s.confirm = ""
	s.mu.Unlock()
	in := s.inbound(line)
	if token != "" {
		yes := strings.EqualFold(strings.TrimSpace(line), "yes") || strings.TrimSpace(line) == "是"
		return s.p.Answer(ctx, in, token, yes, s.sink())
	}
	if cmd, ok := bot.ParseCommand(line); ok {
		return s.p.Exec(ctx, in, cmd, s.sink())
	}
	return s.p.Handle(ctx, in, s.sink())
}

func (s *Session) inbound(text string) bot.Inbound {
	s.seq++
	return bot.Inbound{
		Channel:    s.Channel(),
		AuthorID:   s.opt.User,
		AuthorName: s.opt.User,
		Text:       text,
		CanManage:  true,
		Received:   time.Now(),
	}
}

func (s *Session) prompt() {
	if s.opt.Interactive {
		fmt.Fprint(s.opt.Out, "> ")
	}
}

func (s *Session) sink() *sink { return &sink{s: s} }

// sink prints one reply.
type sink struct {
	s       *Session
	printed int
	started bool
}

var _ bot.Sink = (*sink)(nil)
var _ bot.Confirmer = (*sink)(nil)

func (k *sink) Typing(context.Context) {}

func (k *sink) Update(_ context.Context, text string) error {
	if !k.s.opt.Interactive {
		return nil
	}
	if !k.started {
		k.started = true
		fmt.Fprint(k.s.opt.Out, "\n")
	}
	if len(text) > k.printed {
		fmt.Fprint(k.s.opt.Out, text[k.printed:])
		k.printed = len(text)
	}
	return nil
}

func (k *sink) Finish(_ context.Context, text string) error {
	if k.s.opt.Interactive && k.started {
		if len(text) > k.printed && strings.HasPrefix(text, "") {
			fmt.Fprint(k.s.opt.Out, text[min(k.printed, len(text)):])
		}
		fmt.Fprint(k.s.opt.Out, "\n\n")
		return nil
	}
	_, err := fmt.Fprintf(k.s.opt.Out, "%s\n\n", text)
	return err
}

func (k *sink) Notice(_ context.Context, text string) error {
	_, err := fmt.Fprintf(k.s.opt.Out, "[troupe] %s\n", text)
	return err
}

// Confirm asks a yes/no question answered by the next input line.
func (k *sink) Confirm(_ context.Context, question, token string, _ time.Time) error {
	k.s.mu.Lock()
	k.s.confirm = token
	k.s.mu.Unlock()
	_, err := fmt.Fprintf(k.s.opt.Out, "[troupe] %s (yes / anything else cancels)\n", question)
	return err
}
