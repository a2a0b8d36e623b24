package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"troupe/cards"
	"troupe/models"
	"troupe/prompt"
)

// MaxSwipes is how many alternatives of one reply /swipe writes at most.
const MaxSwipes = 100

// Swipes says which alternative of the last reply a sink is showing: the
// stored message, its place (1 = the first) among the alternatives there
// are.
type Swipes struct {
	MessageID string
	N, Of     int
}

// Swiping is a Sink that can show, with the reply it is about to finish,
// that it is one of several alternatives and offer to page through them:
// buttons under the reply on Discord, an inline keyboard on Telegram, a
// line in the console. The pipeline calls Swipes before the Finish of the
// reply it is about; a button pressed comes back as the command
// SwipeCommand returns.
type Swiping interface {
	Swipes(ctx context.Context, s Swipes)
}

// The operations a swipe button carries.
const (
	SwipePrev = "prev"
	SwipeNext = "next"
	SwipeNew  = "new"
)

// swipeData starts the data of a swipe button: the operation's first
// letter and the message the button is under follow.
const swipeData = "sw:"

// swipeCodes are the letters swipe buttons carry for their operations.
var swipeCodes = map[string]string{SwipePrev: "p", SwipeNext: "f", SwipeNew: "w"}

// SwipeButton is the data of the button that runs op (SwipePrev, SwipeNext
// or SwipeNew) on the reply whose message is messageID: at most 31 bytes,
// within Telegram's 64 and Discord's 100.
func SwipeButton(op, messageID string) string {
	return swipeData + swipeCodes[op] + ":" + messageID
}

// SwipeCommand turns a swipe button's data into the command it runs; ok is
// false for other data. The message id is checked by the pipeline against
// the stored chat, never trusted.
func SwipeCommand(data string) (cmd Command, ok bool) {
	rest, ok := strings.CutPrefix(data, swipeData)
	if !ok {
		return Command{}, false
	}
	code, id, _ := strings.Cut(rest, ":")
	for op, c := range swipeCodes {
		if code == c && id != "" {
			return Command{Name: "swipe", Args: op, On: id}, true
		}
	}
	return Command{}, false
}

// swipeMsg names a text of /swipe.
type swipeMsg int

const (
	msgSwipeNone swipeMsg = iota
	msgSwipeUsage
	msgSwipeRange
	msgSwipeFirst
	msgSwipeGone
	msgSwipeWhisper
	msgSwipeFull
)

var swipeTexts = map[string]map[swipeMsg]string{
	"en": {
		msgSwipeNone:    "There is no reply to page through yet.",
		msgSwipeUsage:   "/swipe writes a new alternative of the last reply; /swipe N shows alternative N again (1 = the first).",
		msgSwipeRange:   "The last reply has %d alternatives: choose one from 1 to %d.",
		msgSwipeFirst:   "This is already the first alternative.",
		msgSwipeGone:    "That reply is no longer the last one: only the last reply has alternatives to page through.",
		msgSwipeWhisper: "A whisper's answers are not paged through: /swipe writes a new one, which reaches you alone.",
		msgSwipeFull:    "The last reply has %d alternatives, as many as troupe keeps: choose one with /swipe N.",
	},
	"zh": {
		msgSwipeNone:    "还没有可以翻页的回复。",
		msgSwipeUsage:   "/swipe 为上一条回复写一个新版本；/swipe N 重新显示第 N 个版本（1 是第一个）。",
		msgSwipeRange:   "上一条回复有 %d 个版本：请选 1 到 %d 之间的一个。",
		msgSwipeFirst:   "这已经是第一个版本了。",
		msgSwipeGone:    "那条回复已经不是最后一条了：只有最后一条回复可以翻页。",
		msgSwipeWhisper: "悄悄话的回答不能翻页：/swipe 会写一个新的，只发给你。",
		msgSwipeFull:    "上一条回复已有 %d 个版本，troupe 最多保留这么多：请用 /swipe N 选择。",
	},
}

func (cm *commands) swtext(lang string, key swipeMsg, args ...any) string {
	return Localized(swipeTexts, lang, key, args...)
}

// parseSwipe reads /swipe's argument: "" or "new", "next", "prev", or an
// alternative's number (n).
func parseSwipe(args string) (op string, n int, ok bool) {
	args = strings.ToLower(strings.TrimSpace(args))
	switch args {
	case "", SwipeNew, "+":
		return SwipeNew, 0, true
	case SwipeNext, ">":
		return SwipeNext, 0, true
	case SwipePrev, "<":
		return SwipePrev, 0, true
	}
	n, err := strconv.Atoi(args)
	if err != nil {
		return "", 0, false
	}
	return "", n, true
}

// cmdSwipe pages through the alternatives of the chat's last reply, each a
// sibling on the transcript's tree as /regen leaves them: a new one
// (written like /regen's), the next or previous, or number N. Showing an
// earlier one moves the chat's head back to it, so the next prompt, the
// views, summaries and the recorder follow the alternative chosen. Who may
// swipe is who may /regen (mayRegen). A whisper's answer is only written
// anew (regenWhisper), never paged through where others might read it.
func (cm *commands) cmdSwipe(ctx context.Context, in Inbound, cmd Command, sink Sink) error {
	cs, err := cm.p.resolve(ctx, in)
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "swipe", err)
	}
	lang := cm.p.language(cs.card)
	op, n, ok := parseSwipe(cmd.Args)
	if !ok {
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeUsage))
	}
	if cs.chat.HeadID == "" {
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeNone))
	}
	head, err := cm.store.Message(ctx, cs.chat.HeadID)
	if err == nil {
		head, err = cm.pastPictures(ctx, head)
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "swipe", err)
	}
	alts := []models.Message{head}
	if head.Role != prompt.RoleUser {
		if alts, err = cm.store.Alternatives(ctx, head); err != nil {
			return cm.p.internal(ctx, sink, "swipe", err)
		}
	}
	if cmd.On != "" && !hasMessage(alts, cmd.On) {
		return refuse(ctx, sink, cm.swtext(lang, msgSwipeGone))
	}
	rp := replyPlan{expectHead: cs.chat.HeadID, user: cs.user, persona: cs.persona, group: in.Channel.Group, start: time.Now()}
	w, whispered, err := cm.whisperAt(ctx, head)
	if err != nil {
		return cm.p.internal(ctx, sink, "swipe", err)
	}
	if whispered {
		if op != SwipeNew {
			return refuse(ctx, sink, cm.swtext(lang, msgSwipeWhisper))
		}
		return cm.regenWhisper(ctx, cs, in, w, rp, sink)
	}
	if ok, err := cm.mayRegen(ctx, in, head); err != nil {
		return cm.p.internal(ctx, sink, "swipe", err)
	} else if !ok {
		return refuse(ctx, sink, cm.p.gtext(lang, msgRegenNotYours))
	}
	if head.Role == prompt.RoleUser {
		// Its reply failed: the first alternative is still to be written.
		if op == SwipePrev || n != 0 {
			return sink.Notice(ctx, cm.swtext(lang, msgSwipeNone))
		}
		rp.parent = head.ID
		rt := routeTurn(cs.channel.Platform, []routeText{{Text: head.Content}}, cs.routeCast(), cs.lastSpeakerName())
		return cm.p.replies(ctx, cs, rt, rp, sink)
	}
	if head.ParentID == "" {
		return cm.swipeGreeting(ctx, cs, head, alts, op, n, sink)
	}
	cur := indexOf(alts, head.ID)
	switch {
	case op == SwipePrev && cur <= 0:
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeFirst))
	case op == SwipePrev:
		return cm.showAlternative(ctx, cs, head, alts, cur-1, sink)
	case op == SwipeNext && cur+1 < len(alts):
		return cm.showAlternative(ctx, cs, head, alts, cur+1, sink)
	case op == "" && (n < 1 || n > len(alts)):
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeRange, len(alts), len(alts)))
	case op == "":
		return cm.showAlternative(ctx, cs, head, alts, n-1, sink)
	case len(alts) >= MaxSwipes:
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeFull, len(alts)))
	}
	// A new alternative, written as /regen writes one: the same speaker,
	// after the same parent, the earlier ones kept beside it.
	rp.parent = head.ParentID
	return cm.p.replies(ctx, cs, route{Speakers: []string{cs.nameOfCard(head.SpeakerCardID)}}, rp, sink)
}

// showAlternative makes alts[i] the chat's head (it was head) and shows it
// again, as the speaker who wrote it.
func (cm *commands) showAlternative(ctx context.Context, cs chatState, head models.Message, alts []models.Message, i int, sink Sink) error {
	alt := alts[i]
	if alt.ID != head.ID {
		// The chat's head is head, or a picture shown after it.
		if err := cm.store.MoveHead(ctx, cs.chat.ID, cs.chat.HeadID, alt.ID); err != nil {
			return cm.p.internal(ctx, sink, "swipe", err)
		}
	}
	card := cs.card
	if cs.scene() {
		if sst, err := cm.p.as(ctx, cs, cs.nameOfCard(alt.SpeakerCardID)); err == nil {
			card = sst.card
		}
	}
	speak(ctx, sink, card, cs.scene())
	offerSwipes(ctx, sink, Swipes{MessageID: alt.ID, N: i + 1, Of: len(alts)})
	return sink.Finish(ctx, alt.Content)
}

// swipeGreeting pages through the card's greetings, in the card's order
// (1 = first_mes): a greeting shown before is shown again, from the
// stored opening (stored is the chat's openings), one never shown is
// stored as a new opening. A new swipe goes on to the next greeting,
// and after the last back to the first.
func (cm *commands) swipeGreeting(ctx context.Context, cs chatState, head models.Message, stored []models.Message, op string, n int, sink Sink) error {
	lang := cm.p.language(cs.card)
	options := greetings(cs.card)
	if len(options) < 2 {
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeNone))
	}
	texts := make([]string, len(options))
	cur := 0
	for i, g := range options {
		texts[i] = cm.p.greeting(cs.card, g, cs.user)
		if texts[i] == head.Content {
			cur = i
		}
	}
	target := (cur + 1) % len(options)
	switch {
	case op == SwipePrev && cur == 0:
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeFirst))
	case op == SwipePrev:
		target = cur - 1
	case op == "" && (n < 1 || n > len(options)):
		return sink.Notice(ctx, cm.swtext(lang, msgSwipeRange, len(options), len(options)))
	case op == "":
		target = n - 1
	}
	msg := (*models.Message)(nil)
	for i := range stored {
		if stored[i].Content == texts[target] {
			msg = &stored[i]
			break
		}
	}
	switch {
	case msg == nil:
		msg = &models.Message{Role: prompt.RoleAssistant, AuthorName: cs.card.Name, Content: texts[target]}
		if err := cm.store.Append(ctx, cs.chat.ID, cs.chat.HeadID, "", []*models.Message{msg}); err != nil {
			return cm.p.internal(ctx, sink, "swipe greeting", err)
		}
	case msg.ID != head.ID:
		if err := cm.store.MoveHead(ctx, cs.chat.ID, cs.chat.HeadID, msg.ID); err != nil {
			return cm.p.internal(ctx, sink, "swipe greeting", err)
		}
	}
	speak(ctx, sink, cs.card, cs.scene())
	offerSwipes(ctx, sink, Swipes{MessageID: msg.ID, N: target + 1, Of: len(options)})
	return sink.Finish(ctx, msg.Content)
}

// greetings are a card's greetings in its order: first_mes, then the
// alternate greetings.
func greetings(c cards.Card) []string {
	return append([]string{c.FirstMes}, c.AlternateGreetings...)
}

// offerSwipes tells sink, if it pages through alternatives, which one it
// shows; a reply without alternatives offers them too (a new one).
func offerSwipes(ctx context.Context, sink Sink, s Swipes) {
	if sw, ok := sink.(Swiping); ok && s.MessageID != "" {
		sw.Swipes(ctx, s)
	}
}

// offerReply offers, before the Finish of the reply msg just stored, to
// page through its alternatives: one query, for sinks that page only.
func (p *Pipeline) offerReply(ctx context.Context, sink Sink, msg models.Message) {
	if _, ok := sink.(Swiping); !ok {
		return
	}
	alts, err := p.opt.Store.Alternatives(ctx, msg)
	if err != nil {
		p.log.Warn("alternatives of a reply", "chat_id", msg.ChatID, "err", err)
		return
	}
	i := indexOf(alts, msg.ID)
	if i < 0 {
		return
	}
	offerSwipes(ctx, sink, Swipes{MessageID: msg.ID, N: i + 1, Of: len(alts)})
}

// offerGreeting offers to page through the greetings of card when head,
// the chat's opening, is one of several.
func (p *Pipeline) offerGreeting(ctx context.Context, sink Sink, card cards.Card, head models.Message, user string) {
	options := greetings(card)
	if head.ParentID != "" || head.Role != prompt.RoleAssistant || len(options) < 2 {
		return
	}
	n := 1
	for i, g := range options {
		if p.greeting(card, g, user) == head.Content {
			n = i + 1
		}
	}
	offerSwipes(ctx, sink, Swipes{MessageID: head.ID, N: n, Of: len(options)})
}

func indexOf(msgs []models.Message, id string) int {
	for i, m := range msgs {
		if m.ID == id {
			return i
		}
	}
	return -1
}

func hasMessage(msgs []models.Message, id string) bool { return indexOf(msgs, id) >= 0 }
