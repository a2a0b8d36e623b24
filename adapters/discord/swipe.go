package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

var (
	_ bot.Swiping = (*reply)(nil)
	_ bot.Swiping = (*ixSink)(nil)
)

// swipeRow is the row of buttons under a reply that is one of its turn's
// alternatives: the previous one, the next one, a new one.
func swipeRow(sw bot.Swipes, lang string) []discordgo.MessageComponent {
	label := "New"
	if lang == "zh" {
		label = "新的"
	}
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "◀", Style: discordgo.SecondaryButton, CustomID: bot.SwipeButton(bot.SwipePrev, sw.MessageID), Disabled: sw.N <= 1},
		discordgo.Button{Label: "▶", Style: discordgo.SecondaryButton, CustomID: bot.SwipeButton(bot.SwipeNext, sw.MessageID), Disabled: sw.N >= sw.Of},
		discordgo.Button{Label: label, Style: discordgo.PrimaryButton, CustomID: bot.SwipeButton(bot.SwipeNew, sw.MessageID)},
	}}}
}

// Swipes puts the buttons under the reply being finished, once it is
// delivered (on its last message).
func (r *reply) Swipes(_ context.Context, sw bot.Swipes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.swipes = &sw
}

// Swipes puts the buttons under the command's reply in the channel; a
// whisper's answer, shown to the caller alone, has none.
func (k *ixSink) Swipes(ctx context.Context, sw bot.Swipes) {
	if !k.private() {
		k.channel(ctx).Swipes(ctx, sw)
	}
}

// buttons puts the swipe buttons, if the pipeline offered them, under the
// last message of the delivered reply, and takes them off the reply in the
// channel that had them before: only the last reply can be swiped. The
// edit keeps the pace of the reply's own edits and does not hold up the
// turn.
func (r *reply) buttons() {
	r.mu.Lock()
	sw := r.swipes
	r.swipes = nil
	r.mu.Unlock()
	sent := r.out.Messages()
	if sw == nil || len(sent) == 0 {
		return
	}
	last := *sent[len(sent)-1]
	comps := swipeRow(*sw, r.sp.lang)
	key := r.pl.channelID + "/" + r.pl.threadID()
	a, s, pl := r.a, r.s, r.pl
	a.spawn(func() {
		ctx := a.work
		if wait := time.Until(last.at.Add(a.tuning.editInterval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		if err := a.setComponents(ctx, s, pl, &last, comps); err != nil {
			a.log.Warn("put swipe buttons under a reply", "channel_id", pl.channelID, "err", err)
			return
		}
		if before := a.swiped.swap(key, &last); before != nil && before.id != last.id {
			if err := a.setComponents(ctx, s, pl, before, []discordgo.MessageComponent{}); err != nil && !gone(err) {
				a.log.Debug("take swipe buttons off an earlier reply", "channel_id", pl.channelID, "err", err)
			}
		}
	})
}

// setComponents replaces the components of a posted message.
func (a *Adapter) setComponents(ctx context.Context, s *discordgo.Session, pl place, p *posted, comps []discordgo.MessageComponent) error {
	if p.hook != nil {
		uri := discordgo.EndpointWebhookMessage(p.hook.ID, p.hook.Token, p.id) + threadQuery(pl)
		_, err := s.RequestWithBucketID("PATCH", uri, &discordgo.WebhookEdit{Components: &comps},
			discordgo.EndpointWebhookToken("", ""), discordgo.WithContext(ctx))
		return err
	}
	_, err := s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: p.id, Channel: pl.channelID, Components: &comps},
		discordgo.WithContext(ctx))
	return err
}

// swipedReplies remembers, per channel (or thread), the reply that has the
// swipe buttons. It is bounded: past maxSwiped channels it starts over,
// and buttons left behind are refused when pressed.
type swipedReplies struct {
	mu sync.Mutex
	m  map[string]*posted
}

const maxSwiped = 10000

func (s *swipedReplies) swap(key string, p *posted) *posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxSwiped {
		s.m = map[string]*posted{}
	}
	before := s.m[key]
	s.m[key] = p
	return before
}

// swipeButton submits a press of a swipe button as the /swipe it stands
// for; ok is false when id is no swipe button's.
func (a *Adapter) swipeButton(s *discordgo.Session, i *discordgo.Interaction, id string) (ok bool) {
	cmd, ok := bot.SwipeCommand(id)
	if !ok {
		return false
	}
	ctx := a.work
	pl := a.place(ctx, s, i.GuildID, i.ChannelID)
	sink := a.newIxSink(s, i, pl, localeLang(string(i.Locale)), true, true)
	// The reply the button is under keeps its text: the answers are
	// follow-ups to the presser, the alternative goes to the channel.
	sink.keep = true
	if !a.allowed(pl) {
		a.spawn(func() {
			if _, err := sink.say(ctx, text(sink.lang, txtNotHere), nil, true); err != nil {
				a.log.Warn("answer interaction", "err", err)
			}
		})
		return true
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
	a.submitInteraction(s, pl, sink, "discord_interaction", "swipe button", bot.Event{Kind: bot.EventCommand, In: in, Command: cmd})
	return true
}
