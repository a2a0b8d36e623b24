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
func (p *Pipeline) personaRefusal(ctx context.Context, in Inbound, lang, name string) (string, error) {
	ch, err := p.opt.Store.Channel(ctx, in.Channel.Key())
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	var castNames []string
	if c, err := p.channelCard(ch); err == nil {
		castNames = append(castNames, c.Name, c.Nickname)
	}
	if ch.CurrentChatID != "" {
		cast, err := p.opt.Store.Cast(ctx, ch.CurrentChatID, true)
		if err != nil {
			return "", err
		}
		for _, m := range cast {
			castNames = append(castNames, m.Name)
			if c, ok := p.opt.Cards.Get(m.CardID); ok {
				castNames = append(castNames, c.Name, c.Nickname)
			}
		}
	}
	for _, n := range castNames {
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
	players, err := p.otherPlayerNames(ctx, in, ch.CurrentChatID)
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
func (p *Pipeline) otherPlayerNames(ctx context.Context, in Inbound, chatID string) ([]string, error) {
	authors, err := p.opt.Store.ChatAuthors(ctx, chatID)
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
	personas, err := p.opt.Store.Personas(ctx, keys)
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
