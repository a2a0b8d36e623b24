package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// commands runs the slash commands (Exec) and the yes/no questions they
// ask (Answer), apart from the turn machinery. What commands share with
// turns (a channel's chat and lane, the user's rate, the texts, starting a
// chat) they reach through p.
type commands struct {
	p     *Pipeline
	store Store
	cards *cards.Library
	log   *slog.Logger
}

// Exec runs a command for the author of in and writes the answer to sink.
func (p *Pipeline) Exec(ctx context.Context, in Inbound, cmd Command, sink Sink) error {
	return p.cmds.exec(ctx, in, cmd, sink)
}

// Answer delivers the answer to a yes/no question a command asked. Expired,
// unknown or already answered questions, and answers from someone else,
// change nothing.
func (p *Pipeline) Answer(ctx context.Context, in Inbound, token string, yes bool, sink Sink) error {
	return p.cmds.answer(ctx, in, token, yes, sink)
}

// exec is Exec.
func (cm *commands) exec(ctx context.Context, in Inbound, cmd Command, sink Sink) error {
	if err := cm.p.begin(); err != nil {
		_ = sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgShuttingDown))
		return err
	}
	defer cm.p.wg.Done()
	// Every command shares the user's rate with messages: each costs a
	// platform write at least, most read or write a chat, /start may open
	// one and /regen calls the model.
	if limited, err := cm.p.overRate(ctx, in, sink); limited {
		return err
	}
	switch cmd.Name {
	case "help":
		return sink.Notice(ctx, cm.p.text(cm.p.langOf(in), msgHelp))
	case "start":
		return cm.cmdStart(ctx, in, cmd.Args, sink)
	case "new":
		if !cm.mayEndChat(in) {
			return refuse(ctx, sink, cm.p.gtext(cm.p.langOf(in), msgNewNotAllowed))
		}
		return cm.p.withLane(ctx, in, func() error { return cm.cmdNew(ctx, in, sink) })
	case "regen":
		return cm.p.withLane(ctx, in, func() error { return cm.cmdRegen(ctx, in, sink) })
	case "swipe":
		return cm.p.withLane(ctx, in, func() error { return cm.cmdSwipe(ctx, in, cmd, sink) })
	case "persona":
		return cm.cmdPersona(ctx, in, cmd.Args, sink)
	case "compact":
		return cm.cmdCompact(ctx, in, sink)
	case "record":
		return cm.cmdRecord(ctx, in, sink)
	case "reflect":
		return cm.cmdReflect(ctx, in, sink)
	case "belief":
		return cm.cmdBelief(ctx, in, cmd.Args, sink)
	case "why":
		return cm.cmdWhy(ctx, in, sink)
	case "forget":
		return cm.cmdForget(ctx, in, cmd.Args, sink)
	case "memory":
		return cm.cmdMemory(ctx, in, cmd.Args, sink)
	case "chats":
		return cm.cmdChats(ctx, in, sink)
	case "card":
		return cm.p.withLane(ctx, in, func() error { return cm.cmdCard(ctx, in, cmd.Args, sink) })
	case "cast":
		return cm.cmdCast(ctx, in, cmd.Args, sink)
	case "whisper":
		return cm.cmdWhisper(ctx, in, cmd.Args, sink)
	case "voice":
		return cm.cmdVoice(ctx, in, cmd.Args, sink)
	case "picture":
		return cm.cmdPicture(ctx, in, cmd.Args, sink)
	}
	return sink.Notice(ctx, cm.p.text(cm.p.langOf(in), msgUnknownCommand, "/"+cmd.Name)+"\n\n"+cm.p.text(cm.p.langOf(in), msgHelp))
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

func (cm *commands) cmdNew(ctx context.Context, in Inbound, sink Sink) error {
	cs, err := cm.p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "new chat", err)
	}
	old := cs.chat.ID
	if cs.scene() {
		return cm.newScene(ctx, cs, sink)
	}
	chat, err := cm.p.startChat(ctx, cs.channel, cs.card, cs.user)
	if err != nil {
		return cm.p.internal(ctx, sink, "new chat", err)
	}
	// An empty chat is not ended: /new took it up again (openEmpty).
	if cm.p.opt.Jobs != nil && old != "" && old != chat.ID {
		if err := cm.p.opt.Jobs.ChatEnded(ctx, old); err != nil {
			cm.log.Warn("enqueue recap of ended chat", "chat_id", old, "err", err)
		}
	}
	lang := cm.p.language(cs.card)
	if err := sink.Notice(ctx, cm.p.text(lang, msgNewChat, cs.card.Name)); err != nil {
		return err
	}
	return cm.showHead(ctx, sink, cs.card, chat, cs.user, cs.scene())
}

// showHead shows the greeting of a chat just opened: its stored head, which
// a chat taken up again (openEmpty) may have worded for another player or
// changed with /regen.
func (cm *commands) showHead(ctx context.Context, sink Sink, card cards.Card, chat models.Chat, user string, scene bool) error {
	if chat.HeadID == "" {
		return nil
	}
	m, err := cm.store.Message(ctx, chat.HeadID)
	if err != nil {
		return cm.p.internal(ctx, sink, "show greeting", err)
	}
	speak(ctx, sink, card, scene)
	if !scene {
		cm.p.offerGreeting(ctx, sink, card, m, user)
	}
	return sink.Finish(ctx, m.Content)
}

// cmdRegen replaces the last reply with a new sibling on the branch. When the
// head is a user message whose reply failed, it writes that reply. A
// whisper's answer is written again only for the whisper's author, and
// only for the two of them (regenWhisper).
func (cm *commands) cmdRegen(ctx context.Context, in Inbound, sink Sink) error {
	cs, err := cm.p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "regen", err)
	}
	lang := cm.p.language(cs.card)
	if cs.chat.HeadID == "" {
		return sink.Notice(ctx, cm.p.text(lang, msgNothingToRegen))
	}
	head, err := cm.store.Message(ctx, cs.chat.HeadID)
	if err == nil {
		head, err = cm.pastPictures(ctx, head)
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "regen", err)
	}
	rp := replyPlan{expectHead: cs.chat.HeadID, user: cs.user, persona: cs.persona, group: in.Channel.Group, start: time.Now()}
	w, whispered, err := cm.whisperAt(ctx, head)
	if err != nil {
		return cm.p.internal(ctx, sink, "regen", err)
	}
	if whispered {
		return cm.regenWhisper(ctx, cs, in, w, rp, sink)
	}
	if ok, err := cm.mayRegen(ctx, in, head); err != nil {
		return cm.p.internal(ctx, sink, "regen", err)
	} else if !ok {
		return refuse(ctx, sink, cm.p.gtext(lang, msgRegenNotYours))
	}
	switch {
	case head.Role == "user":
		rp.parent = head.ID
	case head.ParentID == "":
		// The greeting: pick another of the card's greetings.
		return cm.regenGreeting(ctx, cs, head, sink)
	default:
		rp.parent = head.ParentID
	}
	speaker := cs.lastSpeakerName()
	if head.Role == "user" || speaker == "" {
		rt := routeTurn(cs.channel.Platform, []routeText{{Text: head.Content}}, cs.routeCast(), cs.lastSpeakerName())
		return cm.p.replies(ctx, cs, rt, rp, sink)
	}
	return cm.p.replies(ctx, cs, route{Speakers: []string{cs.nameOfCard(head.SpeakerCardID)}}, rp, sink)
}

// whisperAt returns the whisper head belongs to: head itself when it is a
// whispered user line (its answer failed), or the whispered line head
// answers. ok is false when head belongs to no whisper.
func (cm *commands) whisperAt(ctx context.Context, head models.Message) (w models.Message, ok bool, err error) {
	if head.Role == prompt.RoleUser {
		return head, head.WhisperTo != "", nil
	}
	if head.ParentID == "" {
		return models.Message{}, false, nil
	}
	parent, err := cm.store.Message(ctx, head.ParentID)
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
func (cm *commands) regenWhisper(ctx context.Context, cs chatState, in Inbound, w models.Message, rp replyPlan, sink Sink) error {
	lang := cm.p.language(cs.card)
	if w.AuthorID == "" || w.AuthorID != text.FitID(in.AuthorID, models.IDSize) {
		return refuse(ctx, sink, cm.p.stext(lang, msgWhisperNotYours, w.WhisperTo))
	}
	ws, private := sink.(Whispering)
	if !private && in.Channel.Group {
		return refuse(ctx, sink, cm.p.stext(lang, msgWhisperNoPrivate))
	}
	if !slices.Contains(cs.presentCast(), w.WhisperTo) {
		return sink.Notice(ctx, cm.p.stext(lang, msgCastAway, w.WhisperTo))
	}
	rp.parent = w.ID
	rp.whisper = []string{cs.user, w.WhisperTo}
	if private {
		ws.Whisper(ctx)
	}
	return cm.p.replies(ctx, cs, route{Speakers: []string{w.WhisperTo}}, rp, sink)
}

// regenGreeting shows the card's next greeting, as /swipe does.
func (cm *commands) regenGreeting(ctx context.Context, cs chatState, head models.Message, sink Sink) error {
	stored, err := cm.store.Alternatives(ctx, head)
	if err != nil {
		return cm.p.internal(ctx, sink, "regen greeting", err)
	}
	return cm.swipeGreeting(ctx, cs, head, stored, SwipeNext, 0, sink)
}

func (cm *commands) cmdPersona(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	if args == "" {
		per, err := cm.store.Persona(ctx, in.UserKey())
		if errors.Is(err, models.ErrNotFound) || (err == nil && per.Name == "" && per.Description == "") {
			if lang == "zh" {
				return sink.Notice(ctx, "还没有设置人设。用法：/persona 名字 | 描述")
			}
			return sink.Notice(ctx, "No persona set. Usage: /persona NAME | description")
		}
		if err != nil {
			return cm.p.internal(ctx, sink, "persona", err)
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
		refusal, err := cm.personaRefusal(ctx, in, lang, name)
		if err != nil {
			return cm.p.internal(ctx, sink, "persona", err)
		}
		if refusal != "" {
			return sink.Notice(ctx, refusal)
		}
	}
	if err := cm.store.SetPersona(ctx, models.Persona{UserKey: in.UserKey(), Name: storable(name), Description: storable(desc)}); err != nil {
		return cm.p.internal(ctx, sink, "persona", err)
	}
	if lang == "zh" {
		return sink.Notice(ctx, "人设已保存："+name)
	}
	return sink.Notice(ctx, "Persona saved: "+name)
}

func (cm *commands) cmdChats(ctx context.Context, in Inbound, sink Sink) error {
	lang := cm.p.langOf(in)
	all, err := cm.store.ChannelChats(ctx, in.Channel.Key())
	if err != nil {
		return cm.p.internal(ctx, sink, "chats", err)
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
	ch, _ := cm.store.Channel(ctx, in.Channel.Key())
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

func (cm *commands) cmdCard(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	sub, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	switch strings.ToLower(sub) {
	case "", "list":
		var b strings.Builder
		for _, c := range cm.cards.List() {
			fmt.Fprintf(&b, "- %s (%s)\n", c.Name, c.ID)
		}
		if b.Len() == 0 {
			return sink.Notice(ctx, cm.p.text(lang, msgNoCard))
		}
		return sink.Notice(ctx, strings.TrimRight(b.String(), "\n"))
	case "show":
		ch, err := cm.store.Channel(ctx, in.Channel.Key())
		c, ok := cards.Card{}, false
		if err == nil && ch.CardID != "" {
			c, ok = cm.cards.Get(ch.CardID)
		}
		if !ok {
			c, ok = cm.cards.Default()
		}
		if !ok {
			return sink.Notice(ctx, cm.p.text(lang, msgNoCard))
		}
		return sink.Notice(ctx, fmt.Sprintf("%s (%s)\n%s", c.Name, c.ID, text.Clip(c.Description, 600)))
	case "set":
		if !in.CanManage {
			return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
		}
		c, ok := cm.cards.Find(rest)
		if !ok {
			return sink.Notice(ctx, cm.p.text(lang, msgUnknownCard, rest))
		}
		user, _ := cm.p.persona(ctx, in)
		ch, err := cm.p.channelIn(ctx, in.Channel, "")
		if err != nil {
			return cm.p.internal(ctx, sink, "card set", err)
		}
		if ch.CardID == c.ID && ch.CurrentChatID != "" {
			return sink.Notice(ctx, cm.p.text(lang, msgCardSet, c.Name))
		}
		old := ch.CurrentChatID
		chat, err := cm.p.startChat(ctx, ch, c, user)
		cm.p.forgetBinding(in.Channel)
		if err != nil {
			return cm.p.internal(ctx, sink, "card set", err)
		}
		if cm.p.opt.Jobs != nil && old != "" && old != chat.ID {
			_ = cm.p.opt.Jobs.ChatEnded(ctx, old)
		}
		if err := sink.Notice(ctx, cm.p.text(cm.p.language(c), msgCardSet, c.Name)); err != nil {
			return err
		}
		return cm.showHead(ctx, sink, c, chat, user, false)
	case "mention":
		if !in.CanManage {
			return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
		}
		on := strings.EqualFold(strings.TrimSpace(rest), "on")
		if !on && !strings.EqualFold(strings.TrimSpace(rest), "off") {
			return sink.Notice(ctx, "/card mention on | off")
		}
		if _, err := cm.p.channelIn(ctx, in.Channel, ""); err != nil {
			return cm.p.internal(ctx, sink, "card mention", err)
		}
		err := cm.store.SetChannelMentionOnly(ctx, in.Channel.Key(), on)
		cm.p.forgetBinding(in.Channel)
		if err != nil {
			return cm.p.internal(ctx, sink, "card mention", err)
		}
		return sink.Notice(ctx, cm.p.text(lang, msgMentionOnly, map[bool]string{true: "on", false: "off"}[on]))
	}
	return sink.Notice(ctx, "/card list | show | set NAME | mention on|off")
}

// commandChat resolves the channel's chat for a command, inside the
// channel's lane. When ok is false the command is already answered — the
// channel has no card, or an internal error was reported as what — and
// err is what the command returns.
func (cm *commands) commandChat(ctx context.Context, in Inbound, sink Sink, lang, what string) (cs chatState, ok bool, err error) {
	err = cm.p.withLane(ctx, in, func() (err error) {
		cs, err = cm.p.resolve(ctx, in)
		return err
	})
	if errors.Is(err, ErrNoCard) {
		return cs, false, sink.Notice(ctx, cm.p.text(lang, msgNoCard))
	}
	if err != nil {
		return cs, false, cm.p.internal(ctx, sink, what, err)
	}
	return cs, true, nil
}

func (p *Pipeline) internal(ctx context.Context, sink Sink, what string, err error) error {
	p.log.Error(what, "err", err)
	_ = sink.Notice(ctx, p.text(p.opt.Language, msgInternal))
	return err
}
