package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"troupe/cards"
	"troupe/models"
	"troupe/prompt"
	"troupe/record"
)

// defaultMaxCast is scene.max_cast when Options leave it unset.
const defaultMaxCast = 8

func (p *Pipeline) maxCast() int {
	if p.opt.Scene.MaxCast > 0 {
		return p.opt.Scene.MaxCast
	}
	return defaultMaxCast
}

// allCast is the chat's cast rows, removed members included; a chat
// without rows (older databases) is a cast of its card.
func (cs chatState) allCast() []models.CastMember {
	if len(cs.cast) > 0 {
		return cs.cast
	}
	return []models.CastMember{{ChatID: cs.chat.ID, CardID: cs.chat.CardID, Name: models.FitName(cs.card.Name, models.NameSize)}}
}

// scene reports whether the chat ever had more than one cast member: only
// then do views differ and lines carry their speakers' names, so a
// one-card chat builds the prompts it always has.
func (cs chatState) scene() bool { return len(cs.allCast()) > 1 }

// speakerCard is the card of who is speaking now (cs.member), "" meaning
// the lead.
func (cs chatState) speakerCard() string {
	if cs.member.CardID != "" {
		return cs.member.CardID
	}
	return cs.chat.CardID
}

// speakerName is the cast name of who is speaking now.
func (cs chatState) speakerName() string {
	if cs.member.Name != "" {
		return cs.member.Name
	}
	return cs.allCast()[0].Name
}

// nameOfCard is the cast name of a card ("" meaning the lead).
func (cs chatState) nameOfCard(cardID string) string {
	if cardID == "" {
		cardID = cs.chat.CardID
	}
	for _, m := range cs.allCast() {
		if m.CardID == cardID {
			return m.Name
		}
	}
	return cardID
}

// ledgerAway reports whether the recorder's ledger places name somewhere
// other than the scene's place: such a member counts as away.
func (cs chatState) ledgerAway(name string) bool {
	if cs.ledger == "" {
		return false
	}
	var l record.Ledger
	if json.Unmarshal([]byte(cs.ledger), &l) != nil {
		return false
	}
	return l.Elsewhere(name)
}

// routeCast is the active cast as routing sees it: away when a GM marked
// the member away or the ledger puts it elsewhere.
func (cs chatState) routeCast() []routeMember {
	var out []routeMember
	active := models.ActiveCast(cs.allCast())
	for _, m := range active {
		// The ledger counts only in a scene: a one-card chat's presence
		// stays what it always was.
		out = append(out, routeMember{Name: m.Name, Away: m.Away || (cs.scene() && cs.ledgerAway(m.Name)), Also: displayName(m, active)})
	}
	return out
}

// displayName is the card's display name of a member that goes by another
// name in the space ("Wren" of "Wren (wren-png)", see models.AddCast),
// when no other active member goes by it or has it; "" otherwise.
func displayName(m models.CastMember, active []models.CastMember) string {
	d, ok := strings.CutSuffix(m.Name, " ("+m.CardID+")")
	if !ok || strings.TrimSpace(d) == "" {
		return ""
	}
	for _, o := range active {
		if o.CardID == m.CardID {
			continue
		}
		if od, ok := strings.CutSuffix(o.Name, " ("+o.CardID+")"); strings.EqualFold(o.Name, d) || (ok && strings.EqualFold(od, d)) {
			return ""
		}
	}
	return d
}

// presentCast names the cast members present at a message now.
func (cs chatState) presentCast() []string {
	var out []string
	for _, m := range cs.routeCast() {
		if !m.Away {
			out = append(out, m.Name)
		}
	}
	return out
}

// castNames names every cast row, removed members included.
func (cs chatState) castNames() []string {
	var out []string
	for _, m := range cs.allCast() {
		out = append(out, m.Name)
	}
	return out
}

// lastSpeakerName is the cast name of who wrote the branch's last reply.
func (cs chatState) lastSpeakerName() string {
	if cs.lastSpeaker == "" {
		return ""
	}
	return cs.nameOfCard(cs.lastSpeaker)
}

// as returns cs with the member named name speaking: its card, its name
// and its resident summary in the space (one query, for a member other
// than the lead).
func (p *Pipeline) as(ctx context.Context, cs chatState, name string) (chatState, error) {
	for _, m := range cs.allCast() {
		if m.Name != name {
			continue
		}
		cs.member = m
		if m.CardID == cs.card.ID {
			return cs, nil
		}
		c, ok := p.opt.Cards.Get(m.CardID)
		if !ok {
			return cs, fmt.Errorf("bot: cast member %s: card %s is not in the library: %w", name, m.CardID, ErrNoCard)
		}
		cs.card = c
		res, err := p.opt.Store.Resident(ctx, c.ID, cs.chat.SpaceID)
		if err != nil {
			p.log.Warn("load resident summary", "chat_id", cs.chat.ID, "card_id", c.ID, "err", err)
		}
		cs.resident = res
		return cs, nil
	}
	return cs, fmt.Errorf("bot: no cast member %q: %w", name, models.ErrNotFound)
}

// routeInbox decides who answers the waiting messages of cs, with the
// platform's own signals each row was stored with.
func routeInbox(cs chatState, rows []models.InboxMessage) route {
	msgs := make([]routeText, 0, len(rows))
	for _, r := range rows {
		rt := routeText{Text: r.Content}
		if r.Addressed != "" {
			rt.Addressed = strings.Split(r.Addressed, "\n")
		}
		msgs = append(msgs, rt)
	}
	return routeTurn(cs.channel.Platform, msgs, cs.routeCast(), cs.lastSpeakerName())
}

// replies writes the answers of rt's speakers, in order, each chained
// after the one before: one beat, each later speaker perceiving the
// earlier replies. Addressing only away members gets a notice.
func (p *Pipeline) replies(ctx context.Context, cs chatState, rt route, rp replyPlan, sink Sink) error {
	defer rp.ahead.stop()
	var spoken []speech
	rp.spoken = &spoken
	// The replies' audio follows them, in order, once the last is written.
	defer func() { p.queueSpeeches(cs.channel.ID, spoken) }()
	if len(rt.Speakers) == 0 {
		if rp.release != nil {
			rp.release()
		}
		return sink.Notice(ctx, p.stext(p.language(cs.card), msgCastAway, strings.Join(rt.Away, ", ")))
	}
	for i, name := range rt.Speakers {
		sst, err := p.as(ctx, cs, name)
		if err != nil {
			return p.internal(ctx, sink, "cast member", err)
		}
		id, err := p.replyOne(ctx, sst, rp, sink)
		if err != nil || id == "" || i == len(rt.Speakers)-1 {
			return err
		}
		// The next speaker answers after this reply; its database work
		// waits for a slot like any turn's.
		rp.parent, rp.expectHead = id, id
		rp.release, rp.queued, rp.ahead = func() {}, 0, nil
	}
	return nil
}

// nameLines marks, in a scene, the replies of the other cast members in
// the history (aligned with msgs) so they are sent under their names.
func nameLines(cs chatState, msgs []models.Message, history []prompt.Turn) {
	if !cs.scene() {
		return
	}
	me := cs.speakerCard()
	for i, m := range msgs {
		if m.Role != prompt.RoleAssistant {
			continue
		}
		history[i].Name = cs.nameOfCard(m.SpeakerCardID)
		speaker := m.SpeakerCardID
		if speaker == "" {
			speaker = cs.chat.CardID
		}
		history[i].Other = speaker != me
	}
}

// startScene opens a new chat of several cards in the channel: each
// member's group greeting (its first), else its first greeting, opens it
// in cast order. One card starts a chat as startChat does.
func (p *Pipeline) startScene(ctx context.Context, ch models.Channel, cast []cards.Card, userName string) (models.Chat, []models.CastMember, error) {
	if len(cast) == 1 {
		return p.startChatCast(ctx, ch, cast[0], userName)
	}
	cs := models.ChatStart{ChannelID: ch.ID, SpaceID: ch.SpaceID}
	var names []string
	for _, c := range cast {
		row := cardRow(c)
		if stored, ok := p.cardsStored.Load(c.ID); !ok || stored != row.Data {
			if err := p.opt.Store.UpsertCard(ctx, row); err != nil {
				return models.Chat{}, nil, err
			}
			p.cardsStored.Store(c.ID, row.Data)
		}
		names = append(names, c.Name)
		cs.Cast = append(cs.Cast, models.CastMember{CardID: c.ID, Name: c.Name})
		g := c.FirstMes
		if len(c.GroupGreetings) > 0 {
			g = c.GroupGreetings[0]
		}
		if g = p.greeting(c, g, userName); g != "" {
			cs.Openings = append(cs.Openings, &models.Message{Role: prompt.RoleAssistant, AuthorName: models.FitName(c.Name, models.NameSize), Content: g, SpeakerCardID: c.ID})
		}
	}
	ids := make([]string, len(cast))
	for i, c := range cast {
		ids[i] = c.ID
	}
	if chat, rows, ok, err := p.openEmpty(ctx, ch, ids); ok || err != nil {
		return chat, rows, err
	}
	cs.Name = fmt.Sprintf("%s %s", models.FitName(strings.Join(names, ", "), models.NameSize-17), p.opt.Now().UTC().Format("2006-01-02 15:04"))
	chat, rows, err := p.opt.Store.StartScene(ctx, cs)
	if err != nil {
		return chat, nil, err
	}
	for _, c := range cast {
		p.ensureLore(ctx, ch.SpaceID, c)
	}
	return chat, rows, nil
}

// showOpenings writes a new scene's opening messages, each under its
// speaker.
func (p *Pipeline) showOpenings(ctx context.Context, cs chatState, sink Sink) error {
	if cs.chat.HeadID == "" {
		return nil
	}
	br, err := p.opt.Store.LoadBranch(ctx, cs.chat.HeadID)
	if err != nil {
		return err
	}
	for _, m := range br.Uncovered {
		if m.Role != prompt.RoleAssistant {
			continue
		}
		sst, err := p.as(ctx, cs, cs.nameOfCard(m.SpeakerCardID))
		if err != nil {
			return err
		}
		speak(ctx, sink, sst.card, sst.scene())
		if err := sink.Finish(ctx, m.Content); err != nil {
			return err
		}
	}
	return nil
}

// BindCast makes the channel's current chat a scene of cardIDs (the first
// the lead): when its active cast is another, a new chat of them starts,
// opened by their group greetings. One card binds as Bind does; none
// changes nothing. ErrNoCard (wrapped) names a card not in the library.
func (p *Pipeline) BindCast(ctx context.Context, ref ChannelRef, cardIDs []string) error {
	if len(cardIDs) <= 1 {
		id := ""
		if len(cardIDs) == 1 {
			id = cardIDs[0]
		}
		return p.Bind(ctx, ref, id)
	}
	if len(cardIDs) > p.maxCast() {
		return fmt.Errorf("bot: a cast of %d cards is more than scene.max_cast (%d)", len(cardIDs), p.maxCast())
	}
	var cast []cards.Card
	for _, id := range cardIDs {
		c, ok := p.opt.Cards.Get(id)
		if !ok {
			return fmt.Errorf("bot: card %s: %w", id, ErrNoCard)
		}
		cast = append(cast, c)
	}
	return p.withLane(ctx, Inbound{Channel: ref}, func() error {
		ch, err := p.channelIn(ctx, ref, cardIDs[0])
		if err != nil {
			return err
		}
		if ch.CurrentChatID != "" {
			cur, err := p.opt.Store.Cast(ctx, ch.CurrentChatID, false)
			if err == nil && slices.EqualFunc(cur, cardIDs, func(m models.CastMember, id string) bool { return m.CardID == id }) {
				return nil
			}
		}
		if _, _, err = p.startScene(ctx, ch, cast, ""); err != nil {
			return err
		}
		p.chatEnded(ctx, ch.CurrentChatID)
		return nil
	})
}

// errCast words a cast change's refusal.
func (cm *commands) castRefusal(ctx context.Context, sink Sink, lang, name string, err error) error {
	switch {
	case errors.Is(err, models.ErrInCast):
		return sink.Notice(ctx, cm.p.stext(lang, msgCastAlready, name))
	case errors.Is(err, models.ErrCastFull):
		return sink.Notice(ctx, cm.p.stext(lang, msgCastFull, cm.p.maxCast()))
	case errors.Is(err, models.ErrLastMember):
		return sink.Notice(ctx, cm.p.stext(lang, msgCastLast, name))
	case errors.Is(err, models.ErrNotFound):
		return sink.Notice(ctx, cm.p.stext(lang, msgCastNoMember, name))
	}
	return cm.p.internal(ctx, sink, "cast", err)
}

// greetScene shows a scene's openings while nobody has spoken yet, else
// its last message under its speaker.
func (p *Pipeline) greetScene(ctx context.Context, cs chatState, sink Sink) error {
	if cs.chat.HeadID == "" {
		return nil
	}
	br, err := p.opt.Store.LoadBranch(ctx, cs.chat.HeadID)
	if err != nil {
		return err
	}
	for _, m := range br.Uncovered {
		if m.Role != prompt.RoleAssistant {
			last := br.Uncovered[len(br.Uncovered)-1]
			if last.Role != prompt.RoleAssistant {
				return nil
			}
			sst, err := p.as(ctx, cs, cs.nameOfCard(last.SpeakerCardID))
			if err != nil {
				return err
			}
			speak(ctx, sink, sst.card, sst.scene())
			return sink.Finish(ctx, last.Content)
		}
	}
	return p.showOpenings(ctx, cs, sink)
}
