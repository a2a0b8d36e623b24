package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"troupe/cards"
	"troupe/models"
	"troupe/prompt"
	"troupe/text"
)

// Command is a slash command with its argument text.
type Command struct {
	Name string
	Args string
	// On is, for a button pressed under a reply (SwipeCommand), the
	// stored message it is under; "" for a typed command.
	On string
}

// ParseCommand splits "/name args" (also "/name@bot args", Telegram's form).
// It reports false when text is not a command.
func ParseCommand(text string) (Command, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return Command{}, false
	}
	// Any white space ends the name: a full-width space (U+3000) from a
	// Chinese keyboard, a tab or a line break as well as " ".
	name, args := text[1:], ""
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name, args = name[:i], name[i:]
	}
	name, _, _ = strings.Cut(name, "@")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || strings.Contains(name, "/") {
		return Command{}, false
	}
	return Command{Name: name, Args: strings.TrimSpace(args)}, true
}

// Commands lists the commands every adapter offers, with a short English
// description (for platform command menus).
var Commands = []struct{ Name, Description string }{
	{"new", "Start a new chat with the character"},
	{"regen", "Write the last reply again"},
	{"swipe", "A new alternative of the last reply; /swipe N shows alternative N again"},
	{"compact", "Condense older turns into the relay summary now"},
	{"record", "Record what happened so far into the characters' memories now"},
	{"reflect", "Let the characters form beliefs from what they perceived now"},
	{"belief", "Delete one belief: /belief forget ID"},
	{"why", "Show what the last turn recalled and why (recall.diagnostics)"},
	{"forget", "Erase this chat from the character's memory"},
	{"chats", "List this channel's chats"},
	{"memory", "Show what the character remembers"},
	{"persona", "Set how the character calls and sees you"},
	{"card", "List, show or choose the character"},
	{"cast", "List or change the characters of this scene"},
	{"whisper", "Say something only one character hears: /whisper NAME text"},
	{"voice", "Have replies here also spoken aloud: /voice on | off"},
	{"picture", "A picture of the scene: /picture [what to show]"},
	{"help", "Show the commands"},
}

// Exec runs a command for the author of in and writes the answer to sink.
func (p *Pipeline) Exec(ctx context.Context, in Inbound, cmd Command, sink Sink) error {
	if err := p.begin(); err != nil {
		_ = sink.Notice(ctx, p.text(p.opt.Language, msgShuttingDown))
		return err
	}
	defer p.wg.Done()
	// Every command shares the user's rate with messages: each costs a
	// platform write at least, most read or write a chat, /start may open
	// one and /regen calls the model.
	if limited, err := p.overRate(ctx, in, sink); limited {
		return err
	}
	switch cmd.Name {
	case "help":
		return sink.Notice(ctx, p.text(p.langOf(in), msgHelp))
	case "start":
		return p.cmdStart(ctx, in, cmd.Args, sink)
	case "new":
		if !p.mayEndChat(in) {
			return refuse(ctx, sink, p.gtext(p.langOf(in), msgNewNotAllowed))
		}
		return p.withLane(ctx, in, func() error { return p.cmdNew(ctx, in, sink) })
	case "regen":
		return p.withLane(ctx, in, func() error { return p.cmdRegen(ctx, in, sink) })
	case "swipe":
		return p.withLane(ctx, in, func() error { return p.cmdSwipe(ctx, in, cmd, sink) })
	case "persona":
		return p.cmdPersona(ctx, in, cmd.Args, sink)
	case "compact":
		return p.cmdCompact(ctx, in, sink)
	case "record":
		return p.cmdRecord(ctx, in, sink)
	case "reflect":
		return p.cmdReflect(ctx, in, sink)
	case "belief":
		return p.cmdBelief(ctx, in, cmd.Args, sink)
	case "why":
		return p.cmdWhy(ctx, in, sink)
	case "forget":
		return p.cmdForget(ctx, in, cmd.Args, sink)
	case "memory":
		return p.cmdMemory(ctx, in, cmd.Args, sink)
	case "chats":
		return p.cmdChats(ctx, in, sink)
	case "card":
		return p.withLane(ctx, in, func() error { return p.cmdCard(ctx, in, cmd.Args, sink) })
	case "cast":
		return p.cmdCast(ctx, in, cmd.Args, sink)
	case "whisper":
		return p.cmdWhisper(ctx, in, cmd.Args, sink)
	case "voice":
		return p.cmdVoice(ctx, in, cmd.Args, sink)
	case "picture":
		return p.cmdPicture(ctx, in, cmd.Args, sink)
	}
	return sink.Notice(ctx, p.text(p.langOf(in), msgUnknownCommand, "/"+cmd.Name)+"\n\n"+p.text(p.langOf(in), msgHelp))
}

// withLane runs fn while no turn runs in the channel.
func (p *Pipeline) withLane(ctx context.Context, in Inbound, fn func() error) error {
	l := p.lane(in.Channel.Key())
	l.busy.Lock()
	defer l.busy.Unlock()
	unlock := p.crossLock(ctx, "channel:"+in.Channel.Key())
	defer unlock()
	return fn()
}

// langOf is the language of the channel's card, else the configured one.
func (p *Pipeline) langOf(in Inbound) string {
	ch, err := p.opt.Store.Channel(context.Background(), in.Channel.Key())
	if err == nil && ch.CardID != "" {
		if c, ok := p.opt.Cards.Get(ch.CardID); ok {
			return p.language(c)
		}
	}
	if c, ok := p.opt.Cards.Default(); ok {
		return p.language(c)
	}
	return p.opt.Language
}

func (p *Pipeline) cmdNew(ctx context.Context, in Inbound, sink Sink) error {
	cs, err := p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, p.text(p.opt.Language, msgNoCard))
	}
	if err != nil {
		return p.internal(ctx, sink, "new chat", err)
	}
	old := cs.chat.ID
	if cs.scene() {
		return p.newScene(ctx, cs, sink)
	}
	chat, err := p.startChat(ctx, cs.channel, cs.card, cs.user)
	if err != nil {
		return p.internal(ctx, sink, "new chat", err)
	}
	// An empty chat is not ended: /new took it up again (openEmpty).
	if p.opt.Jobs != nil && old != "" && old != chat.ID {
		if err := p.opt.Jobs.ChatEnded(ctx, old); err != nil {
			p.log.Warn("enqueue recap of ended chat", "chat_id", old, "err", err)
		}
	}
	lang := p.language(cs.card)
	if err := sink.Notice(ctx, p.text(lang, msgNewChat, cs.card.Name)); err != nil {
		return err
	}
	return p.showHead(ctx, sink, cs.card, chat, cs.user, cs.scene())
}

// showHead shows the greeting of a chat just opened: its stored head, which
// a chat taken up again (openEmpty) may have worded for another player or
// changed with /regen.
func (p *Pipeline) showHead(ctx context.Context, sink Sink, card cards.Card, chat models.Chat, user string, scene bool) error {
	if chat.HeadID == "" {
		return nil
	}
	m, err := p.opt.Store.Message(ctx, chat.HeadID)
	if err != nil {
		return p.internal(ctx, sink, "show greeting", err)
	}
	speak(ctx, sink, card, scene)
	if !scene {
		p.offerGreeting(ctx, sink, card, m, user)
	}
	return sink.Finish(ctx, m.Content)
}

// cmdRegen replaces the last reply with a new sibling on the branch. When the
// head is a user message whose reply failed, it writes that reply. A
// whisper's answer is written again only for the whisper's author, and
// only for the two of them (regenWhisper).
func (p *Pipeline) cmdRegen(ctx context.Context, in Inbound, sink Sink) error {
	cs, err := p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, p.text(p.opt.Language, msgNoCard))
	}
	if err != nil {
		return p.internal(ctx, sink, "regen", err)
	}
	lang := p.language(cs.card)
	if cs.chat.HeadID == "" {
		return sink.Notice(ctx, p.text(lang, msgNothingToRegen))
	}
	head, err := p.opt.Store.Message(ctx, cs.chat.HeadID)
	if err == nil {
		head, err = p.pastPictures(ctx, head)
	}
	if err != nil {
		return p.internal(ctx, sink, "regen", err)
	}
	rp := replyPlan{expectHead: cs.chat.HeadID, user: cs.user, persona: cs.persona, group: in.Channel.Group, start: time.Now()}
	w, whispered, err := p.whisperAt(ctx, head)
	if err != nil {
		return p.internal(ctx, sink, "regen", err)
	}
	if whispered {
		return p.regenWhisper(ctx, cs, in, w, rp, sink)
	}
	if ok, err := p.mayRegen(ctx, in, head); err != nil {
		return p.internal(ctx, sink, "regen", err)
	} else if !ok {
		return refuse(ctx, sink, p.gtext(lang, msgRegenNotYours))
	}
	switch {
	case head.Role == "user":
		rp.parent = head.ID
	case head.ParentID == "":
		// The greeting: pick another of the card's greetings.
		return p.regenGreeting(ctx, cs, head, sink)
	default:
		rp.parent = head.ParentID
	}
	speaker := cs.lastSpeakerName()
	if head.Role == "user" || speaker == "" {
		rt := routeTurn(cs.channel.Platform, []routeText{{Text: head.Content}}, cs.routeCast(), cs.lastSpeakerName())
		return p.replies(ctx, cs, rt, rp, sink)
	}
	return p.replies(ctx, cs, route{Speakers: []string{cs.nameOfCard(head.SpeakerCardID)}}, rp, sink)
}

// whisperAt returns the whisper head belongs to: head itself when it is a
// whispered user line (its answer failed), or the whispered line head
// answers. ok is false when head belongs to no whisper.
func (p *Pipeline) whisperAt(ctx context.Context, head models.Message) (w models.Message, ok bool, err error) {
	if head.Role == prompt.RoleUser {
		return head, head.WhisperTo != "", nil
	}
	if head.ParentID == "" {
		return models.Message{}, false, nil
	}
	parent, err := p.opt.Store.Message(ctx, head.ParentID)
	if err != nil {
		return models.Message{}, false, err
	}
	return parent, parent.Role == prompt.RoleUser && parent.WhisperTo != "", nil
}

// regenWhisper writes again the answer to the whisper w, which the head is
// or answers (rp expects that head): for its author alone, and again only between the two of them.
// Anyone else is refused, and so is the author where the sink cannot give
// them the answer privately in a group channel; the answer never reaches
// the channel.
func (p *Pipeline) regenWhisper(ctx context.Context, cs chatState, in Inbound, w models.Message, rp replyPlan, sink Sink) error {
	lang := p.language(cs.card)
	if w.AuthorID == "" || w.AuthorID != text.FitID(in.AuthorID, models.IDSize) {
		return refuse(ctx, sink, p.stext(lang, msgWhisperNotYours, w.WhisperTo))
	}
	ws, private := sink.(Whispering)
	if !private && in.Channel.Group {
		return refuse(ctx, sink, p.stext(lang, msgWhisperNoPrivate))
	}
	if !slices.Contains(cs.presentCast(), w.WhisperTo) {
		return sink.Notice(ctx, p.stext(lang, msgCastAway, w.WhisperTo))
	}
	rp.parent = w.ID
	rp.whisper = []string{cs.user, w.WhisperTo}
	if private {
		ws.Whisper(ctx)
	}
	return p.replies(ctx, cs, route{Speakers: []string{w.WhisperTo}}, rp, sink)
}

// regenGreeting shows the card's next greeting, as /swipe does.
func (p *Pipeline) regenGreeting(ctx context.Context, cs chatState, head models.Message, sink Sink) error {
	stored, err := p.opt.Store.Alternatives(ctx, head)
	if err != nil {
		return p.internal(ctx, sink, "regen greeting", err)
	}
	return p.swipeGreeting(ctx, cs, head, stored, SwipeNext, 0, sink)
}

func (p *Pipeline) cmdPersona(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := p.langOf(in)
	if args == "" {
		per, err := p.opt.Store.Persona(ctx, in.UserKey())
		if errors.Is(err, models.ErrNotFound) || (err == nil && per.Name == "" && per.Description == "") {
			if lang == "zh" {
				return sink.Notice(ctx, "还没有设置人设。用法：/persona 名字 | 描述")
			}
			return sink.Notice(ctx, "No persona set. Usage: /persona NAME | description")
		}
		if err != nil {
			return p.internal(ctx, sink, "persona", err)
		}
		return sink.Notice(ctx, fmt.Sprintf("%s | %s", per.Name, per.Description))
	}
	name, desc, _ := strings.Cut(args, "|")
	name, desc = strings.TrimSpace(name), strings.TrimSpace(desc)
	if len([]rune(name)) > 60 || len([]rune(desc)) > 2000 {
		if lang == "zh" {
			return sink.Notice(ctx, "名字最多 60 字，描述最多 2000 字。")
		}
		return sink.Notice(ctx, "The name may have at most 60 characters and the description 2000.")
	}
	if name != "" {
		refusal, err := p.personaRefusal(ctx, in, lang, name)
		if err != nil {
			return p.internal(ctx, sink, "persona", err)
		}
		if refusal != "" {
			return sink.Notice(ctx, refusal)
		}
	}
	if err := p.opt.Store.SetPersona(ctx, models.Persona{UserKey: in.UserKey(), Name: storable(name), Description: storable(desc)}); err != nil {
		return p.internal(ctx, sink, "persona", err)
	}
	if lang == "zh" {
		return sink.Notice(ctx, "人设已保存："+name)
	}
	return sink.Notice(ctx, "Persona saved: "+name)
}

func (p *Pipeline) cmdChats(ctx context.Context, in Inbound, sink Sink) error {
	lang := p.langOf(in)
	all, err := p.opt.Store.ChannelChats(ctx, in.Channel.Key())
	if err != nil {
		return p.internal(ctx, sink, "chats", err)
	}
	// Chats the channel played in another space (before it was made
	// private or public) are that space's: not listed, not forgotten here.
	var chats []models.Chat
	for _, c := range all {
		if c.SpaceID == in.Channel.Space() {
			chats = append(chats, c)
		}
	}
	if len(chats) == 0 {
		if lang == "zh" {
			return sink.Notice(ctx, "这个频道还没有对局。")
		}
		return sink.Notice(ctx, "No chats in this channel yet.")
	}
	ch, _ := p.opt.Store.Channel(ctx, in.Channel.Key())
	var b strings.Builder
	for _, c := range chats {
		mark := " "
		if c.ID == ch.CurrentChatID {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %s  %s\n", mark, c.ID, c.Name)
	}
	return sink.Notice(ctx, strings.TrimRight(b.String(), "\n"))
}

func (p *Pipeline) cmdCard(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := p.langOf(in)
	sub, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	switch strings.ToLower(sub) {
	case "", "list":
		var b strings.Builder
		for _, c := range p.opt.Cards.List() {
			fmt.Fprintf(&b, "- %s (%s)\n", c.Name, c.ID)
		}
		if b.Len() == 0 {
			return sink.Notice(ctx, p.text(lang, msgNoCard))
		}
		return sink.Notice(ctx, strings.TrimRight(b.String(), "\n"))
	case "show":
		ch, err := p.opt.Store.Channel(ctx, in.Channel.Key())
		c, ok := cards.Card{}, false
		if err == nil && ch.CardID != "" {
			c, ok = p.opt.Cards.Get(ch.CardID)
		}
		if !ok {
			c, ok = p.opt.Cards.Default()
		}
		if !ok {
			return sink.Notice(ctx, p.text(lang, msgNoCard))
		}
		return sink.Notice(ctx, fmt.Sprintf("%s (%s)\n%s", c.Name, c.ID, text.Clip(c.Description, 600)))
	case "set":
		if !in.CanManage {
			return sink.Notice(ctx, p.text(lang, msgNotAllowed))
		}
		c, ok := p.opt.Cards.Find(rest)
		if !ok {
			return sink.Notice(ctx, p.text(lang, msgUnknownCard, rest))
		}
		user, _ := p.persona(ctx, in)
		ch, err := p.channelIn(ctx, in.Channel, "")
		if err != nil {
			return p.internal(ctx, sink, "card set", err)
		}
		if ch.CardID == c.ID && ch.CurrentChatID != "" {
			return sink.Notice(ctx, p.text(lang, msgCardSet, c.Name))
		}
		old := ch.CurrentChatID
		chat, err := p.startChat(ctx, ch, c, user)
		p.forgetBinding(in.Channel)
		if err != nil {
			return p.internal(ctx, sink, "card set", err)
		}
		if p.opt.Jobs != nil && old != "" && old != chat.ID {
			_ = p.opt.Jobs.ChatEnded(ctx, old)
		}
		if err := sink.Notice(ctx, p.text(p.language(c), msgCardSet, c.Name)); err != nil {
			return err
		}
		return p.showHead(ctx, sink, c, chat, user, false)
	case "mention":
		if !in.CanManage {
			return sink.Notice(ctx, p.text(lang, msgNotAllowed))
		}
		on := strings.EqualFold(strings.TrimSpace(rest), "on")
		if !on && !strings.EqualFold(strings.TrimSpace(rest), "off") {
			return sink.Notice(ctx, "/card mention on | off")
		}
		if _, err := p.channelIn(ctx, in.Channel, ""); err != nil {
			return p.internal(ctx, sink, "card mention", err)
		}
		err := p.opt.Store.SetChannelMentionOnly(ctx, in.Channel.Key(), on)
		p.forgetBinding(in.Channel)
		if err != nil {
			return p.internal(ctx, sink, "card mention", err)
		}
		return sink.Notice(ctx, p.text(lang, msgMentionOnly, map[bool]string{true: "on", false: "off"}[on]))
	}
	return sink.Notice(ctx, "/card list | show | set NAME | mention on|off")
}

// commandChat resolves the channel's chat for a command, inside the
// channel's lane. When ok is false the command is already answered — the
// channel has no card, or an internal error was reported as what — and
// err is what the command returns.
func (p *Pipeline) commandChat(ctx context.Context, in Inbound, sink Sink, lang, what string) (cs chatState, ok bool, err error) {
	err = p.withLane(ctx, in, func() (err error) {
		cs, err = p.resolve(ctx, in)
		return err
	})
	if errors.Is(err, ErrNoCard) {
		return cs, false, sink.Notice(ctx, p.text(lang, msgNoCard))
	}
	if err != nil {
		return cs, false, p.internal(ctx, sink, what, err)
	}
	return cs, true, nil
}

func (p *Pipeline) internal(ctx context.Context, sink Sink, what string, err error) error {
	p.log.Error(what, "err", err)
	_ = sink.Notice(ctx, p.text(p.opt.Language, msgInternal))
	return err
}
