package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"troupe/models"
)

// personaRefusal words why name cannot be in's author's persona name in
// their channel, or is "" when the name is free. A player cannot take the
// name of a cast member — a card of the channel's current chat (removed
// members included: their lines and memories carry the name) or the card
// the next chat plays, by its name or nickname — nor that of another
// player who has spoken in the current chat, by their persona name or
// display name: lines written under it would be recorded as theirs. Names
// compare as sameName does. Errors are the store's.
func (cm *commands) personaRefusal(ctx context.Context, in Inbound, lang, name string) (string, error) {
	ch, err := cm.store.Channel(ctx, in.Channel.Key())
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	cs := chatState{channel: ch}
	// Without a card there is no cast to take a name from.
	cs.card, _ = cm.p.channelCard(ch)
	if ch.CurrentChatID != "" {
		cs.chat.ID = ch.CurrentChatID
		if cs.cast, err = cm.store.Cast(ctx, ch.CurrentChatID, true); err != nil {
			return "", err
		}
	}
	for _, n := range cm.p.castNamesOf(cs) {
		if sameName(n, name) {
			if lang == "zh" {
				return fmt.Sprintf("“%s”是本频道角色的名字，人设请换一个名字。", n), nil
			}
			return fmt.Sprintf("%q is the name of a character in this channel; choose another name for your persona.", n), nil
		}
	}
	if ch.CurrentChatID == "" {
		return "", nil
	}
	players, err := cm.otherPlayerNames(ctx, in, ch.CurrentChatID)
	if err != nil {
		return "", err
	}
	for _, n := range players {
		if sameName(n, name) {
			if lang == "zh" {
				return fmt.Sprintf("本频道已有其他玩家叫“%s”，人设请换一个名字。", n), nil
			}
			return fmt.Sprintf("Another player here already goes by %q; choose another name for your persona.", n), nil
		}
	}
	return "", nil
}

// otherPlayerNames names the players other than in's author who wrote in
// chatID: each one's display names and persona name.
func (cm *commands) otherPlayerNames(ctx context.Context, in Inbound, chatID string) ([]string, error) {
	authors, err := cm.store.ChatAuthors(ctx, chatID)
	if err != nil {
		return nil, err
	}
	var names, keys []string
	for _, a := range authors {
		if a.ID == in.AuthorID {
			continue
		}
		names = append(names, a.Name)
		keys = append(keys, in.Channel.Platform+":"+a.ID)
	}
	personas, err := cm.store.Personas(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, per := range personas {
		names = append(names, per.Name)
	}
	return names, nil
}

// sameName reports whether two names are one to a reader: equal after
// compatibility normalization (full-width letters are letters), folding
// case the Unicode way (ß is ss) and collapsing white space. An empty name
// is nobody's.
func sameName(a, b string) bool {
	fa := foldName(a)
	return fa != "" && fa == foldName(b)
}

func foldName(s string) string {
	return cases.Fold().String(strings.Join(strings.Fields(norm.NFKC.String(s)), " "))
}

// apartFromCast returns name, the name in's author plays under in cs (their
// persona's or display name), marked as a player's when a cast member goes
// by it: a persona set in another channel, a member added later or a
// display name that is a character's would otherwise have their lines
// recorded as the character's.
func (p *Pipeline) apartFromCast(cs chatState, name string) string {
	for _, n := range p.castNamesOf(cs) {
		if sameName(n, name) {
			if p.language(cs.card) == "zh" {
				return name + "（玩家）"
			}
			return name + " (player)"
		}
	}
	return name
}

// castNamesOf names cs's cast members, removed ones included, by their cast
// names and their cards' names and nicknames.
func (p *Pipeline) castNamesOf(cs chatState) []string {
	names := []string{cs.card.Name, cs.card.Nickname}
	for _, m := range cs.allCast() {
		names = append(names, m.Name)
		if c, ok := p.opt.Cards.Get(m.CardID); ok {
			names = append(names, c.Name, c.Nickname)
		}
	}
	return names
}
