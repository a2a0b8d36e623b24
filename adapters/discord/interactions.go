package discord

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

func (a *Adapter) onInteraction(s *discordgo.Session, ic *discordgo.InteractionCreate) {
	i := ic.Interaction
	if i == nil {
		return
	}
	// Commands and buttons are queued here, on the gateway's goroutine,
	// so they keep their place among the channel's messages.
	switch i.Type {
	case discordgo.InteractionApplicationCommandAutocomplete:
		a.spawn(func() { a.autocomplete(s, i) })
	case discordgo.InteractionApplicationCommand:
		a.command(s, i)
	case discordgo.InteractionMessageComponent:
		a.button(s, i)
	}
}

// await ends an interaction's sink once the engine finished its event.
func (a *Adapter) await(rc bot.Receipt, sink *ixSink, what string) {
	if !a.spawn(func() {
		err := rc.Wait(a.work)
		sink.end(a.work)
		if err != nil {
			a.log.Warn(what+" failed", "channel_id", sink.pl.channelID, "err", err)
		}
	}) {
		sink.end(a.work)
	}
}

// caller is the user behind an interaction.
func caller(i *discordgo.Interaction) (*discordgo.User, *discordgo.Member) {
	if i.Member != nil && i.Member.User != nil {
		return i.Member.User, i.Member
	}
	if i.User != nil {
		return i.User, nil
	}
	return &discordgo.User{}, nil
}

// command submits a slash command to the engine.
func (a *Adapter) command(s *discordgo.Session, i *discordgo.Interaction) {
	ctx := a.work
	cmd := commandOf(i.ApplicationCommandData())
	lang := localeLang(string(i.Locale))
	pl := a.place(ctx, s, i.GuildID, i.ChannelID)
	sink := a.newIxSink(s, i, pl, lang, !public(cmd), false)
	sink.whisper = cmd.Name == "whisper"
	if !a.allowed(pl) {
		a.spawn(func() {
			if _, err := sink.say(ctx, text(lang, txtNotHere), nil, true); err != nil {
				a.log.Warn("answer interaction", "err", err)
			}
		})
		return
	}
	sink.start(ctx)
	u, m := caller(i)
	in := bot.Inbound{
		Channel:    pl.ref(u.ID),
		AuthorID:   u.ID,
		AuthorName: displayName(u, m),
		CanManage:  a.canManage(s, i, cmd),
		Received:   time.Now(),
	}
	a.submitInteraction(s, pl, sink, "discord_interaction", "slash command "+cmd.Name, bot.Event{Kind: bot.EventCommand, In: in, Command: cmd})
}

// submitInteraction submits an interaction's event in order among its
// channel's events (inOrder); its sink is ended once the engine is done.
// The sink was started, so a slow queue costs the caller a "thinking…".
func (a *Adapter) submitInteraction(s *discordgo.Session, pl place, sink *ixSink, where, what string, ev bot.Event) {
	if !a.inOrder(s, pl.channelID, where, func() { a.await(a.p.Submit(a.work, ev, sink), sink, what) }) {
		sink.end(a.work)
	}
}

// confirmYes and confirmNo start the custom ids of the yes/no buttons; the
// question's token follows.
const (
	confirmYes = "troupe:yes:"
	confirmNo  = "troupe:no:"
)

// button submits a confirm or cancel press to the engine.
func (a *Adapter) button(s *discordgo.Session, i *discordgo.Interaction) {
	ctx := a.work
	id := i.MessageComponentData().CustomID
	if a.swipeButton(s, i, id) {
		return
	}
	var yes bool
	var token string
	switch {
	case strings.HasPrefix(id, confirmYes):
		yes, token = true, strings.TrimPrefix(id, confirmYes)
	case strings.HasPrefix(id, confirmNo):
		token = strings.TrimPrefix(id, confirmNo)
	default:
		return
	}
	pl := a.place(ctx, s, i.GuildID, i.ChannelID)
	if !a.allowed(pl) {
		// Refused like a command, to the presser alone; the question (if
		// any) keeps its buttons and its expiry.
		k := a.newIxSink(s, i, pl, localeLang(string(i.Locale)), true, false)
		a.spawn(func() {
			if _, err := k.say(ctx, text(k.lang, txtNotHere), nil, true); err != nil {
				a.log.Warn("answer interaction", "err", err)
			}
		})
		return
	}
	// The question's message is ephemeral: only its author can press.
	a.confirms.answered(token)
	u, m := caller(i)
	in := bot.Inbound{
		Channel:    pl.ref(u.ID),
		AuthorID:   u.ID,
		AuthorName: displayName(u, m),
		CanManage:  a.canManage(s, i, bot.Command{Name: "forget"}),
		Received:   time.Now(),
	}
	sink := a.newIxSink(s, i, pl, localeLang(string(i.Locale)), true, true)
	sink.start(ctx)
	a.submitInteraction(s, pl, sink, "discord_interaction", "confirmation", bot.Event{Kind: bot.EventButton, In: in, Token: token, Yes: yes})
}

// ixSink is the bot.Sink of a slash command or a button press. troupe's
// notices answer the interaction (ephemeral unless the command is public);
// the character's text goes to the channel like any reply. A command that
// has not answered within ackAfter is deferred; a button press is
// acknowledged at once and its first notice replaces the question.
type ixSink struct {
	a         *Adapter
	s         *discordgo.Session
	i         *discordgo.Interaction
	pl        place
	lang      string
	ephemeral bool
	component bool
	// keep, for a button under a reply, leaves that reply as it is: what
	// troupe answers goes to the presser alone as follow-ups.
	keep bool
	// whisper keeps the character's text between it and the caller: the
	// answer to a /whisper goes to the caller alone, under the speaker's
	// name, after a line saying whom the whisper reached.
	whisper bool

	mu    sync.Mutex
	state ixState
	timer *time.Timer
	reply *reply
	// sp and told are, for a whisper, who answers and whether the caller
	// heard that the whisper reached them.
	sp   speaker
	told bool
}

type ixState int

const (
	ixNew ixState = iota
	ixDeferred
	ixAnswered
)

var (
	_ bot.Sink       = (*ixSink)(nil)
	_ bot.Confirmer  = (*ixSink)(nil)
	_ bot.Refusing   = (*ixSink)(nil)
	_ bot.Whispering = (*ixSink)(nil)
	_ bot.Confiding  = (*ixSink)(nil)
)

func (a *Adapter) newIxSink(s *discordgo.Session, i *discordgo.Interaction, pl place, lang string, ephemeral, component bool) *ixSink {
	return &ixSink{a: a, s: s, i: i, pl: pl, lang: lang, ephemeral: ephemeral, component: component}
}

func flags(ephemeral bool) discordgo.MessageFlags {
	if ephemeral {
		return discordgo.MessageFlagsEphemeral
	}
	return 0
}

func (k *ixSink) start(ctx context.Context) {
	if k.component {
		k.mu.Lock()
		defer k.mu.Unlock()
		err := k.s.InteractionRespond(k.i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate},
			discordgo.WithContext(ctx))
		if err != nil {
			k.a.log.Warn("acknowledge button", "err", err)
			return
		}
		k.state = ixDeferred
		if k.keep {
			k.state = ixAnswered
		}
		return
	}
	k.mu.Lock()
	k.timer = time.AfterFunc(k.a.tuning.ackAfter, func() { k.ack(ctx) })
	k.mu.Unlock()
}

// ack defers the answer if none was given yet.
func (k *ixSink) ack(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.state != ixNew {
		return
	}
	err := k.s.InteractionRespond(k.i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: flags(k.ephemeral)},
	}, discordgo.WithContext(ctx))
	if err != nil {
		k.a.log.Warn("defer slash command", "err", err)
		return
	}
	k.state = ixDeferred
}

// end closes the interaction after the pipeline is done: a command that said
// nothing gets a short "done", or its "thinking…" placeholder removed.
func (k *ixSink) end(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.timer != nil {
		k.timer.Stop()
	}
	if k.component {
		return
	}
	var err error
	switch k.state {
	case ixNew:
		err = k.s.InteractionRespond(k.i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: text(k.lang, txtDone), Flags: discordgo.MessageFlagsEphemeral},
		}, discordgo.WithContext(ctx))
	case ixDeferred:
		err = k.s.InteractionResponseDelete(k.i, discordgo.WithContext(ctx))
	}
	if err != nil {
		k.a.log.Warn("close interaction", "err", err)
	}
}

// where is a message written for an interaction: its original response or
// a follow-up.
type where struct{ followup string }

// say writes content as the interaction's next message; components go with
// the last piece. A follow-up is ephemeral when asked; the original response
// is as ephemeral as the command.
func (k *ixSink) say(ctx context.Context, content string, components []discordgo.MessageComponent, ephemeral bool) (where, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	pieces := bot.Split(content, maxMessage)
	if len(pieces) == 0 {
		pieces = []string{"…"}
	}
	var w where
	for n, piece := range pieces {
		comps := []discordgo.MessageComponent{}
		if n == len(pieces)-1 && components != nil {
			comps = components
		}
		var err error
		w, err = k.sayOne(ctx, piece, comps, ephemeral)
		if err != nil {
			return w, err
		}
	}
	return w, nil
}

func (k *ixSink) sayOne(ctx context.Context, piece string, comps []discordgo.MessageComponent, ephemeral bool) (where, error) {
	opt := discordgo.WithContext(ctx)
	switch k.state {
	case ixNew:
		err := k.s.InteractionRespond(k.i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: piece, Flags: flags(ephemeral), Components: comps, AllowedMentions: noMentions()},
		}, opt)
		if err != nil {
			return where{}, err
		}
		k.state = ixAnswered
		return where{}, nil
	case ixDeferred:
		_, err := k.s.InteractionResponseEdit(k.i, &discordgo.WebhookEdit{Content: &piece, Components: &comps, AllowedMentions: noMentions()}, opt)
		if err != nil {
			return where{}, err
		}
		k.state = ixAnswered
		return where{}, nil
	}
	m, err := k.s.FollowupMessageCreate(k.i, true, &discordgo.WebhookParams{
		Content: piece, Flags: flags(ephemeral), Components: comps, AllowedMentions: noMentions(),
	}, opt)
	if err != nil {
		return where{}, err
	}
	return where{followup: m.ID}, nil
}

// Notice answers the interaction.
func (k *ixSink) Notice(ctx context.Context, text string) error {
	k.mu.Lock()
	ephemeral := k.ephemeral
	k.mu.Unlock()
	_, err := k.say(ctx, text, nil, ephemeral)
	if err != nil {
		k.a.log.Error("answer interaction", "channel_id", k.pl.channelID, "err", err)
	}
	return err
}

// Refuse answers the caller alone, whatever the command: the engine did
// not take it.
func (k *ixSink) Refuse(ctx context.Context, text string) error {
	_, err := k.say(ctx, text, nil, true)
	if err != nil {
		k.a.log.Error("answer interaction", "channel_id", k.pl.channelID, "err", err)
	}
	return err
}

// Confide answers the caller alone (ephemeral), whatever the command.
func (k *ixSink) Confide(ctx context.Context, text string) error {
	return k.Refuse(ctx, text)
}

// Confirm asks the caller (alone) a yes/no question with two buttons that
// carry token. When the question expires unanswered, its buttons go.
func (k *ixSink) Confirm(ctx context.Context, question string, token string, expires time.Time) error {
	yes, no := "Confirm", "Cancel"
	if k.lang == "zh" {
		yes, no = "确认", "取消"
	}
	row := discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: yes, Style: discordgo.DangerButton, CustomID: confirmYes + token},
		discordgo.Button{Label: no, Style: discordgo.SecondaryButton, CustomID: confirmNo + token},
	}}
	w, err := k.say(ctx, question, []discordgo.MessageComponent{row}, true)
	if err != nil {
		k.a.log.Error("ask for confirmation", "channel_id", k.pl.channelID, "err", err)
		return err
	}
	k.a.confirms.add(token, expires, func() {
		k.a.spawn(func() { k.expire(question, w) })
	})
	return nil
}

// expire takes the buttons off an unanswered question.
func (k *ixSink) expire(question string, w where) {
	content := question + "\n\n" + text(k.lang, txtExpired)
	none := []discordgo.MessageComponent{}
	edit := &discordgo.WebhookEdit{Content: &content, Components: &none}
	var err error
	if w.followup != "" {
		_, err = k.s.FollowupMessageEdit(k.i, w.followup, edit, discordgo.WithContext(k.a.work))
	} else {
		_, err = k.s.InteractionResponseEdit(k.i, edit, discordgo.WithContext(k.a.work))
	}
	if err != nil {
		k.a.log.Warn("expire a question", "err", err)
	}
}

// channel is the reply that carries the character's text for a command,
// speaking as the engine says (Speak; /card set changes the card).
func (k *ixSink) channel(ctx context.Context) *reply {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.reply == nil {
		k.reply = k.a.newReply(k.s, k.pl)
	}
	return k.reply
}

// Whisper makes the rest of the command private, as a /whisper is: the
// answer to the caller's whisper, written again by /regen, and the
// notices with it reach the caller alone. A public "thinking…" already
// shown for the command is deleted, and what follows goes out as
// ephemeral follow-ups, since an edit of that response would be public.
func (k *ixSink) Whisper(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	wasPublic := !k.ephemeral
	k.whisper, k.ephemeral = true, true
	if k.state != ixDeferred || !wasPublic || k.component {
		return
	}
	if err := k.s.InteractionResponseDelete(k.i, discordgo.WithContext(ctx)); err != nil {
		k.a.log.Warn("withdraw a public placeholder", "channel_id", k.pl.channelID, "err", err)
	}
	k.state = ixAnswered
}

// private reports whether the character's text goes to the caller alone.
func (k *ixSink) private() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.whisper
}

// Speak sets who the character text of the command is written as; a
// whisper's caller first hears that the whisper reached them.
func (k *ixSink) Speak(ctx context.Context, sp bot.Speaker) {
	if !k.private() {
		k.channel(ctx).Speak(ctx, sp)
		return
	}
	k.mu.Lock()
	k.sp = speakerOf(sp)
	told := k.told
	k.told = true
	k.mu.Unlock()
	if told {
		return
	}
	lang := sp.Language
	if lang == "" {
		lang = k.lang
	}
	if _, err := k.say(ctx, fmt.Sprintf(text(lang, txtWhispered), sp.Name), nil, true); err != nil {
		k.a.log.Error("answer interaction", "channel_id", k.pl.channelID, "err", err)
	}
}

// Typing defers the command (the model takes a while) and shows typing in
// the channel, except for a whisper, whose answer the channel never sees.
func (k *ixSink) Typing(ctx context.Context) {
	k.ack(ctx)
	if !k.private() {
		k.channel(ctx).Typing(ctx)
	}
}

// Update streams the character's text into the channel; a whisper's answer
// is shown whole when it is done.
func (k *ixSink) Update(ctx context.Context, text string) error {
	if k.private() {
		return nil
	}
	return k.channel(ctx).Update(ctx, text)
}

// Finish posts the character's final text in the channel, or a whisper's
// answer to the caller alone under the speaker's name in bold.
func (k *ixSink) Finish(ctx context.Context, text string) error {
	if !k.private() {
		return k.channel(ctx).Finish(ctx, text)
	}
	k.mu.Lock()
	sp := k.sp
	k.mu.Unlock()
	_, err := k.say(ctx, sp.prefix()+text, nil, true)
	if err != nil {
		k.a.log.Error("answer a whisper", "channel_id", k.pl.channelID, "err", err)
	}
	return err
}

// confirms holds the expiry timers of open questions.
type confirms struct {
	mu      sync.Mutex
	m       map[string]*time.Timer
	stopped bool
}

func (c *confirms) add(token string, expires time.Time, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	if c.m == nil {
		c.m = map[string]*time.Timer{}
	}
	c.m[token] = time.AfterFunc(time.Until(expires), func() {
		c.mu.Lock()
		_, open := c.m[token]
		delete(c.m, token)
		c.mu.Unlock()
		if open {
			fn()
		}
	})
}

func (c *confirms) answered(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[token]; ok {
		t.Stop()
		delete(c.m, token)
	}
}

func (c *confirms) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.m {
		t.Stop()
	}
	clear(c.m)
	c.stopped = true
}
