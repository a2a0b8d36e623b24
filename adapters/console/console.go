// Package console is the terminal adapter: an interactive chat with streaming
// output and the slash commands, or, when stdin is not a terminal, one message
// per input line and each reply printed whole, so scripts can drive it.
package console

import (
	"bufio"
	"context"
	"errors"
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
	// Cast, with more than one card id, binds the channel to a scene of
	// those cards (the first is CardID); each reply is printed under its
	// speaker's name.
	Cast []string
	// Bold prints speakers' names in bold (ANSI), for a terminal; else
	// "Name: " before the reply.
	Bold bool
	// Interactive streams replies as they are written and shows a prompt.
	Interactive bool
	// MaxLineBytes bounds what one input line may hold in memory; a longer
	// line is skipped with a notice and the session goes on. 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

// DefaultMaxLineBytes is the longest input line a session takes: far more
// than any model's context, so the pipeline, which knows the context, is
// what refuses a long message; the bound only keeps memory in check.
const DefaultMaxLineBytes = 64 << 20

// Session is one console conversation.
type Session struct {
	p   bot.Engine
	opt Options
	mu  sync.Mutex
	// confirm holds a pending yes/no question's token.
	confirm string
	seq     int
}

// New returns a console session on the engine.
func New(p bot.Engine, opt Options) *Session {
	if opt.User == "" {
		opt.User = "you"
	}
	if opt.MaxLineBytes <= 0 {
		opt.MaxLineBytes = DefaultMaxLineBytes
	}
	return &Session{p: p, opt: opt}
}

// Channel is the console channel of the session: one per user and card, in
// the local user's space. A user name or card id too long for the store's
// id columns is replaced by its stable stand-in (bot.StableID), the same on
// every database and every run.
func (s *Session) Channel() bot.ChannelRef {
	id := s.opt.User + "/" + s.opt.CardID
	if s.scene() {
		id = s.opt.User + "/" + strings.Join(s.opt.Cast, "+")
	}
	return bot.ChannelRef{Platform: bot.PlatformConsole, ID: bot.StableID(id),
		SpaceKind: bot.SpaceLocal, SpaceID: bot.StableID(s.opt.User)}
}

// scene reports whether the session plays several cards.
func (s *Session) scene() bool { return len(s.opt.Cast) > 1 }

// typeAhead is how long the session's opening may take before lines typed
// at a terminal meanwhile are stored as they come: past it the opening
// waits for the channel's lock, which a process that died holds for a few
// seconds, and a line typed then must survive this process dying too.
// Within it (the usual opening), and always when a script drives the
// console, each line waits and becomes a turn of its own.
const typeAhead = 250 * time.Millisecond

// input is one line read, or why reading ended.
type input struct {
	line string
	over int
	err  error
}

// Run reads lines until the input ends or ctx is done.
func (s *Session) Run(ctx context.Context) error {
	lines := make(chan input)
	go s.read(ctx, lines)
	// The session opens as an event like any line: the engine binds the
	// channel to the session's card or cast and shows its opening.
	cast := s.opt.Cast
	if !s.scene() && s.opt.CardID != "" {
		cast = []string{s.opt.CardID}
	}
	open := s.p.Submit(ctx, bot.Event{Kind: bot.EventOpen, In: s.inbound(""), Cast: cast}, s.sink())
	held, early, ended, err := s.opening(ctx, open, lines)
	if err != nil {
		return fmt.Errorf("console: open the session: %w", err)
	}
	// What an earlier session accepted and never answered is answered now.
	own := s.Channel().Key()
	if err := s.p.Resume(ctx, bot.PlatformConsole, func(ref bot.ChannelRef) (bot.Sink, bool) {
		return s.sink(), ref.Key() == own
	}); err != nil {
		return err
	}
	for _, rc := range early {
		if err := rc.Wait(context.WithoutCancel(ctx)); err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.opt.Out, "! %v\n", err)
		}
	}
	for {
		var in input
		if len(held) > 0 {
			in, held = held[0], held[1:]
		} else if ended != nil {
			in, ended = *ended, nil
		} else {
			s.prompt()
			select {
			case in = <-lines:
			case <-ctx.Done():
				return nil
			}
		}
		if done, err := s.take(ctx, in); done {
			return err
		}
	}
}

// opening waits for the open event. Lines read meanwhile are held (and
// returned) while it is quick; once it has taken typeAhead, at a terminal,
// messages are submitted as they come, each stored in the inbox before the
// next is read, and their receipts are returned: lines typed then join one
// turn, as messages sent while a character writes do elsewhere. A command
// and every line after it are held: a "yes" must answer the question the
// command asks. ended is the end of the input if it came.
func (s *Session) opening(ctx context.Context, open bot.Receipt, lines <-chan input) (held []input, early []bot.Receipt, ended *input, err error) {
	timer := time.NewTimer(typeAhead)
	defer timer.Stop()
	if !s.opt.Interactive {
		timer.Stop()
	}
	eager := false
	for {
		var in <-chan input
		if ended == nil {
			in = lines
		}
		select {
		case <-open.Done():
			return held, early, ended, open.Wait(ctx)
		case <-timer.C:
			eager = true
			for len(held) > 0 && eager {
				early, eager = s.submitEarly(ctx, held[0], early)
				if eager {
					held = held[1:]
				}
			}
		case got := <-in:
			switch {
			case got.err != nil:
				ended = &got
			case eager:
				if early, eager = s.submitEarly(ctx, got, early); !eager {
					held = append(held, got)
				}
			default:
				held = append(held, got)
			}
		}
	}
}

// submitEarly submits a message read while the session opens, without
// waiting for its turn: it is stored (and ordered after the opening) when
// Submit returns. Its receipt is added to early; a line the console skips
// adds none. A command is left alone (taken false): it waits for its turn.
func (s *Session) submitEarly(ctx context.Context, in input, early []bot.Receipt) (_ []bot.Receipt, taken bool) {
	if in.over > 0 || strings.TrimSpace(in.line) == "" {
		s.skipped(in)
		return early, true
	}
	if _, cmd := bot.ParseCommand(in.line); cmd {
		return early, false
	}
	return append(early, s.p.Submit(ctx, s.event(in.line), s.sink())), true
}

// skipped tells the user about a line too long to take.
func (s *Session) skipped(in input) {
	if in.over > 0 {
		fmt.Fprintf(s.opt.Out, "[troupe] That line is %d bytes, more than the console takes (%d); it was skipped.\n", in.over, s.opt.MaxLineBytes)
	}
}

// take handles one input; done is true when the session ends (err is then
// why, nil at the end of the input).
func (s *Session) take(ctx context.Context, in input) (done bool, err error) {
	defer func() {
		// A panic in the console's handling of a line is told and the
		// session goes on with the next.
		if v := recover(); v != nil {
			fmt.Fprintf(s.opt.Out, "[troupe] %s\n", s.p.Recovered("console_line", v))
			done, err = false, nil
		}
	}()
	if errors.Is(in.err, io.EOF) {
		return true, nil
	}
	if in.err != nil {
		return true, fmt.Errorf("console: read input: %w", in.err)
	}
	if ctx.Err() != nil {
		return true, nil
	}
	if in.over > 0 || strings.TrimSpace(in.line) == "" {
		s.skipped(in)
		return false, nil
	}
	if err := s.handle(ctx, in.line); err != nil && ctx.Err() == nil {
		fmt.Fprintf(s.opt.Out, "! %v\n", err)
	}
	return false, nil
}

// read sends the input's lines to lines, then why it ended, until ctx is
// done. A read blocked on the terminal outlives ctx until its line comes.
func (s *Session) read(ctx context.Context, lines chan<- input) {
	r := bufio.NewReaderSize(s.opt.In, 64<<10)
	for {
		line, over, err := readLine(r, s.opt.MaxLineBytes)
		select {
		case lines <- input{line: line, over: over, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line of any length without its line ending. A line
// over max bytes is read to its end and dropped: over is then its length.
// The last line may lack a newline; io.EOF comes only when nothing is left.
func readLine(r *bufio.Reader, max int) (line string, over int, err error) {
	var buf []byte
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if n <= max {
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (!errors.Is(err, io.EOF) || n == 0) {
			return "", 0, err
		}
		if n > max {
			return "", n, nil
		}
		return strings.TrimRight(string(buf), "\r\n"), 0, nil
	}
}

func (s *Session) handle(ctx context.Context, line string) error {
	// The console is one person at a terminal: each line waits for its
	// answer. The turn runs under ctx; once ctx ends it stops and tells the
	// user, and the wait lasts until it has.
	return s.p.Submit(ctx, s.event(line), s.sink()).Wait(context.WithoutCancel(ctx))
}

// event is what a line asks: the answer to a pending question, a command
// or a message.
func (s *Session) event(line string) bot.Event {
	s.mu.Lock()
	token := s.confirm
	s.confirm = ""
	s.mu.Unlock()
	ev := bot.Event{Kind: bot.EventMessage, In: s.inbound(line)}
	if token != "" {
		ev.Kind, ev.Token = bot.EventButton, token
		ev.Yes = strings.EqualFold(strings.TrimSpace(line), "yes") || strings.TrimSpace(line) == "是"
	} else if cmd, ok := bot.ParseCommand(line); ok {
		ev.Kind, ev.Command = bot.EventCommand, cmd
	}
	return ev
}

func (s *Session) inbound(text string) bot.Inbound {
	s.seq++
	return bot.Inbound{
		Channel:    s.Channel(),
		AuthorID:   bot.StableID(s.opt.User),
		AuthorName: bot.FitName(s.opt.User),
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
	// name is the speaker of the reply being printed, in a scene.
	name string
	// swipes is the line that follows the reply being printed when it is
	// one of several alternatives; "" when none.
	swipes string
	// speaker is who spoke last, scene or not: files are said to be theirs.
	speaker string
}

var _ bot.Sink = (*sink)(nil)
var _ bot.Confirmer = (*sink)(nil)
var _ bot.Speaking = (*sink)(nil)

// Speak starts the next reply; in a scene it is printed under sp's name,
// whether the session opened with a cast or the scene grew with /cast add
// (sp.Scene says which chat the engine plays, the session's flags only how
// it began).
func (k *sink) Speak(_ context.Context, sp bot.Speaker) {
	k.printed, k.started = 0, false
	k.name, k.speaker = "", sp.Name
	if sp.Scene || k.s.scene() {
		k.name = sp.Name
	}
}

// label is the speaker's name as printed before a reply; "" outside a
// scene, so a one-card console prints as it always has.
func (k *sink) label() string {
	if k.name == "" {
		return ""
	}
	if k.s.opt.Bold {
		return "\x1b[1m" + k.name + "\x1b[0m "
	}
	return k.name + ": "
}

func (k *sink) Typing(context.Context) {}

func (k *sink) Update(_ context.Context, text string) error {
	if !k.s.opt.Interactive {
		return nil
	}
	if !k.started {
		k.started = true
		fmt.Fprint(k.s.opt.Out, "\n"+k.label())
	}
	if len(text) > k.printed {
		fmt.Fprint(k.s.opt.Out, text[k.printed:])
		k.printed = len(text)
	}
	return nil
}

func (k *sink) Finish(_ context.Context, text string) error {
	if k.swipes != "" {
		defer fmt.Fprintln(k.s.opt.Out, k.swipes)
		k.swipes = ""
	}
	if k.s.opt.Interactive && k.started {
		if len(text) > k.printed && strings.HasPrefix(text, "") {
			fmt.Fprint(k.s.opt.Out, text[min(k.printed, len(text)):])
		}
		fmt.Fprint(k.s.opt.Out, "\n\n")
		return nil
	}
	_, err := fmt.Fprintf(k.s.opt.Out, "%s%s\n\n", k.label(), text)
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

var _ bot.Swiping = (*sink)(nil)

// Swipes says, after a reply that is one of several alternatives, which
// one it is and how to page; a reply without others prints as it always
// has.
func (k *sink) Swipes(_ context.Context, sw bot.Swipes) {
	k.swipes = ""
	if sw.Of > 1 {
		k.swipes = fmt.Sprintf("[troupe] alternative %d of %d (/swipe for a new one, /swipe N for number N)", sw.N, sw.Of)
	}
}
