package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"troupe/cards"
	"troupe/models"
	"troupe/prompt"
	"troupe/text"
)

// castMsg names a text of scenes and their commands.
type castMsg int

const (
	msgCastAway castMsg = iota
	msgCastAlready
	msgCastFull
	msgCastLast
	msgCastNoMember
	msgCastUsage
	msgCastAdded
	msgCastRemoved
	msgCastMarkedAway
	msgCastBack
	msgCastUnknownCard
	msgCastHeading
	msgCastAwayMark
	msgWhisperUsage
	msgWhisperNotYours
	msgWhisperNoPrivate
	msgWhisperFailed
)

var castTexts = map[string]map[castMsg]string{
	"en": {
		msgCastAway:         "Away right now: %s. Nobody else was addressed, so nobody answers.",
		msgCastAlready:      "%s is already in the cast.",
		msgCastFull:         "The cast is full (scene.max_cast is %d).",
		msgCastLast:         "%s is the last of the cast and stays; add another character first.",
		msgCastNoMember:     "Nobody called %q is in the cast. /cast lists it.",
		msgCastUsage:        "/cast · /cast add CARD · /cast remove NAME · /cast away NAME · /cast back NAME",
		msgCastAdded:        "%s joins the scene.",
		msgCastRemoved:      "%s leaves the cast.",
		msgCastMarkedAway:   "%s is away: it perceives nothing of the scene until /cast back.",
		msgCastBack:         "%s is back in the scene.",
		msgCastUnknownCard:  "No card %q in the library. The cards:\n%s",
		msgCastHeading:      "The cast:",
		msgCastAwayMark:     " · away",
		msgWhisperUsage:     "Usage: /whisper NAME text (NAME is one of the cast: /cast lists it).",
		msgWhisperNotYours:  "The last exchange is someone's whisper to %s: only the one who whispered can have it answered again.",
		msgWhisperNoPrivate: "The last exchange is your whisper, and its answer can only reach you privately, which cannot be done here.",
		msgWhisperFailed:    "%[1]s did not answer your whisper (%[2]s). It is saved and stays between you two: send /regen yourself and the answer comes to you alone.",
	},
	"zh": {
		msgCastAway:         "暂时不在场：%s。没有点到其他角色，所以没有人回答。",
		msgCastAlready:      "%s 已经在阵容里了。",
		msgCastFull:         "阵容已满（scene.max_cast 为 %d）。",
		msgCastLast:         "%s 是阵容里最后一个角色，不能移除；请先加入另一个角色。",
		msgCastNoMember:     "阵容里没有叫 %q 的角色。/cast 可以查看阵容。",
		msgCastUsage:        "/cast · /cast add 角色卡 · /cast remove 名字 · /cast away 名字 · /cast back 名字",
		msgCastAdded:        "%s 加入了这一幕。",
		msgCastRemoved:      "%s 离开了阵容。",
		msgCastMarkedAway:   "%s 已离场：在 /cast back 之前，它感知不到这一幕的任何事。",
		msgCastBack:         "%s 回到了这一幕。",
		msgCastUnknownCard:  "卡库里没有 %q。现有的角色卡：\n%s",
		msgCastHeading:      "阵容：",
		msgCastAwayMark:     " · 离场",
		msgWhisperUsage:     "用法：/whisper 名字 内容（名字是阵容里的角色，/cast 可以查看）。",
		msgWhisperNotYours:  "最近的对话是别人对 %s 说的悄悄话，只有说悄悄话的人才能让它重新回答。",
		msgWhisperNoPrivate: "最近的对话是你的悄悄话，它的回答只能私下发给你，而这里做不到。",
		msgWhisperFailed:    "%[1]s 没有回答你的悄悄话（%[2]s）。悄悄话已保存，仍只在你们两人之间：由你自己发送 /regen，回答只会私下发给你。",
	},
}

func (p *Pipeline) stext(lang string, key castMsg, args ...any) string {
	return Localized(castTexts, lang, key, args...)
}

// cmdCast lists the channel's cast, or changes it (a GM's command).
func (cm *commands) cmdCast(ctx context.Context, in Inbound, args string, sink Sink) error {
	sub, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	sub, rest = strings.ToLower(sub), strings.TrimSpace(rest)
	lang := cm.p.langOf(in)
	if sub != "" && sub != "list" {
		if !in.CanManage {
			return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
		}
		if rest == "" {
			return sink.Notice(ctx, cm.p.stext(lang, msgCastUsage))
		}
	}
	return cm.p.withLane(ctx, in, func() error {
		cs, err := cm.p.resolve(ctx, in)
		if errors.Is(err, ErrNoCard) {
			return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
		}
		if err != nil {
			return cm.p.internal(ctx, sink, "cast", err)
		}
		lang = cm.p.language(cs.card)
		chatID := cs.chat.ID
		switch sub {
		case "", "list":
			var b strings.Builder
			b.WriteString(cm.p.stext(lang, msgCastHeading))
			for _, m := range models.ActiveCast(cs.allCast()) {
				fmt.Fprintf(&b, "\n- %s (%s)", m.Name, m.CardID)
				if m.Away {
					b.WriteString(cm.p.stext(lang, msgCastAwayMark))
				}
			}
			return sink.Notice(ctx, b.String())
		case "add":
			c, ok := cm.cards.Find(rest)
			if !ok {
				var b strings.Builder
				for _, c := range cm.cards.List() {
					fmt.Fprintf(&b, "- %s (%s)\n", c.Name, c.ID)
				}
				return sink.Notice(ctx, cm.p.stext(lang, msgCastUnknownCard, rest, strings.TrimRight(b.String(), "\n")))
			}
			if err := cm.store.UpsertCard(ctx, cardRow(c)); err != nil {
				return cm.p.internal(ctx, sink, "cast add", err)
			}
			m, err := cm.store.AddCast(ctx, chatID, c.ID, c.Name, cm.p.maxCast())
			if err != nil {
				return cm.castRefusal(ctx, sink, lang, c.Name, err)
			}
			cm.p.ensureLore(ctx, cs.chat.SpaceID, c)
			return sink.Notice(ctx, cm.p.stext(lang, msgCastAdded, m.Name))
		case "remove":
			if err := cm.store.RemoveCast(ctx, chatID, rest); err != nil {
				return cm.castRefusal(ctx, sink, lang, rest, err)
			}
			return sink.Notice(ctx, cm.p.stext(lang, msgCastRemoved, rest))
		case "away", "back":
			if err := cm.store.SetAway(ctx, chatID, rest, sub == "away"); err != nil {
				return cm.castRefusal(ctx, sink, lang, rest, err)
			}
			if sub == "away" {
				return sink.Notice(ctx, cm.p.stext(lang, msgCastMarkedAway, rest))
			}
			return sink.Notice(ctx, cm.p.stext(lang, msgCastBack, rest))
		}
		return sink.Notice(ctx, cm.p.stext(lang, msgCastUsage))
	})
}

// splitWhisper finds the cast member args start with (the longest name
// that matches, any case; a member's other name too) and the text after it.
func splitWhisper(args string, cast []routeMember) (routeMember, string, bool) {
	var best routeMember
	text, longest := "", 0
	for _, m := range cast {
		for _, n := range []string{m.Name, m.Also} {
			if n == "" || len(n) <= longest || len(args) <= len(n) || !strings.EqualFold(args[:len(n)], n) {
				continue
			}
			rest := args[len(n):]
			if r := firstRune(rest); !unicode.IsSpace(r) && r != ':' && r != '：' && r != ',' && r != '，' {
				continue
			}
			best, longest, text = m, len(n), strings.TrimSpace(strings.TrimLeft(rest, ":：,，"))
		}
	}
	return best, text, best.Name != "" && text != ""
}

// cmdWhisper stores a user line only NAME (and the writer) perceives, and
// NAME answers it, also for the two of them alone.
func (cm *commands) cmdWhisper(ctx context.Context, in Inbound, args string, sink Sink) error {
	if tooLong(args, cm.p.opt.Limits.MaxChars) {
		return sink.Notice(ctx, cm.p.text(cm.p.langOf(in), msgTooLong, cm.p.opt.Limits.MaxChars))
	}
	return cm.p.withLane(ctx, in, func() error {
		cs, err := cm.p.resolve(ctx, in)
		if errors.Is(err, ErrNoCard) {
			return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
		}
		if err != nil {
			return cm.p.internal(ctx, sink, "whisper", err)
		}
		lang := cm.p.language(cs.card)
		m, line, ok := splitWhisper(strings.TrimSpace(args), cs.routeCast())
		if !ok {
			return sink.Notice(ctx, cm.p.stext(lang, msgWhisperUsage))
		}
		if m.Away {
			return sink.Notice(ctx, cm.p.stext(lang, msgCastAway, m.Name))
		}
		pair := []string{cs.user, m.Name}
		msg := &models.Message{Role: prompt.RoleUser, AuthorID: text.FitID(in.AuthorID, models.IDSize), AuthorName: models.FitName(storable(in.AuthorName), models.NameSize),
			Content: storable(line), WhisperTo: m.Name}
		rec := cm.p.turnRecord(cs, []*models.Message{msg}, true, in.AuthorID)
		rec.Present, rec.Whisper = pair, pair
		if err := cm.store.AppendTurn(ctx, cs.chat.ID, cs.chat.HeadID, cs.chat.HeadID, []*models.Message{msg}, rec); err != nil {
			return cm.p.internal(ctx, sink, "whisper", err)
		}
		rp := replyPlan{parent: msg.ID, expectHead: msg.ID, user: cs.user, persona: cs.persona, group: in.Channel.Group, start: time.Now(), whisper: pair}
		return cm.p.replies(ctx, cs, route{Speakers: []string{m.Name}}, rp, sink)
	})
}

// newScene starts a new chat with the scene's active cast (/new in a
// scene) and shows its openings.
func (cm *commands) newScene(ctx context.Context, cs chatState, sink Sink) error {
	old := cs.chat.ID
	var cast []cards.Card
	for _, m := range models.ActiveCast(cs.allCast()) {
		if c, ok := cm.cards.Get(m.CardID); ok {
			cast = append(cast, c)
		}
	}
	if len(cast) == 0 {
		return sink.Notice(ctx, cm.p.text(cm.p.opt.Language, msgNoCard))
	}
	chat, rows, err := cm.p.startScene(ctx, cs.channel, cast, cs.user)
	if err != nil {
		return cm.p.internal(ctx, sink, "new chat", err)
	}
	if cm.p.opt.Jobs != nil && old != chat.ID {
		if err := cm.p.opt.Jobs.ChatEnded(ctx, old); err != nil {
			cm.log.Warn("enqueue recap of ended chat", "chat_id", old, "err", err)
		}
	}
	var names []string
	for _, c := range cast {
		names = append(names, c.Name)
	}
	if err := sink.Notice(ctx, cm.p.text(cm.p.language(cs.card), msgNewChat, strings.Join(names, ", "))); err != nil {
		return err
	}
	cs.chat, cs.cast, cs.card = chat, rows, cast[0]
	return cm.p.showOpenings(ctx, cs, sink)
}
