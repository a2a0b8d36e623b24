package prompt

import (
	"strings"

	"troupe/cards"
)

// CardText is a turn's card material before expansion: the card, whose
// macros Env expands, the name and persona the user plays under, and the
// activated lore entries by position (every position but AtDepth, which
// Material.Lore carries as injections).
//
// The persona of the user the reply answers stays in the system message:
// it is who the card talks to, as in a one-player chat, and /persona keeps
// it to 2,000 characters. The other players' personas are not card
// material: they go in a note of their own (AssembleInput.Players).
type CardText struct {
	Card    cards.Card
	Env     *cards.Env
	User    string
	Persona string
	Placed  map[cards.Position][]string
}

// expandCard fills in's system text, the lore's system text, the card's
// depth prompt and its post-history instructions from ct. The texts are
// expanded in that order, once each: macros with effects (setvar, random
// picks) run as they always have.
func expandCard(in AssembleInput, ct *CardText) AssembleInput {
	lang := in.Language
	in.System = systemText(ct, lang, nil)
	if len(ct.Placed) > 0 {
		lore := Lore{}
		if in.Lore != nil {
			lore = *in.Lore
		}
		lore.System = systemText(ct, lang, ct.Placed)
		in.Lore = &lore
	}
	if dp := ct.Card.DepthPrompt; dp != nil {
		in.Injections = append(in.Injections[:len(in.Injections):len(in.Injections)], Injection{Depth: dp.Depth, Role: dp.Role, Content: ct.Env.Expand(dp.Prompt)})
	}
	// troupe has no text of its own after the history, so {{original}}
	// there stands for nothing.
	in.PostHistory = ct.Env.Expand(ct.Card.PostHistoryInstructions)
	return in
}

// ownSystemText is troupe's own opening of the system message; a card's
// system_prompt replaces it, and {{original}} in that prompt stands for it.
func ownSystemText(lang, char, user string) string {
	if lang == "zh" {
		return "你在和" + user + "进行一场持续的角色扮演，你扮演" + char + "。始终保持角色，只写" + char +
			"的言行与旁白，不替" + user + "说话或行动；让故事自然推进，记住已经发生的事。"
	}
	return "You are " + char + " in an ongoing roleplay with " + user + ". Stay in character. Write only " + char +
		"'s words and actions and the narration around them, never " + user + "'s. Let the story move on its own and keep to what has happened."
}

// systemText builds the character part of the system message, expanding
// its macros with ct's env, with the lore entries of placed before and
// after the character and around the example dialogues, and the user's
// persona. creator_notes are for people browsing cards and are never sent.
func systemText(ct *CardText, lang string, placed map[cards.Position][]string) string {
	c, user, persona, env := ct.Card, ct.User, ct.Persona, ct.Env
	var b strings.Builder
	x := func(s string) string { return strings.TrimSpace(env.Expand(s)) }
	own := ownSystemText(lang, c.Name, user)
	env.Original = own
	sp := x(c.SystemPrompt)
	env.Original = ""
	if sp == "" {
		sp = own
	}
	b.WriteString(sp)
	block := func(pos cards.Position) {
		if entries := placed[pos]; len(entries) > 0 {
			b.WriteString("\n\n")
			b.WriteString(strings.Join(entries, "\n"))
		}
	}
	section := func(label, text string) {
		if text != "" {
			b.WriteString("\n\n")
			b.WriteString(label)
			b.WriteString("\n")
			b.WriteString(text)
		}
	}
	labels := [5]string{"[" + c.Name + "]", "[Personality]", "[Scenario]", "[" + user + "]", "[Example dialogue]"}
	if lang == "zh" {
		labels = [5]string{"【" + c.Name + "】", "【性格】", "【场景】", "【" + user + "】", "【对话示例】"}
	}
	block(cards.BeforeChar)
	section(labels[0], x(c.Description))
	section(labels[1], x(c.Personality))
	section(labels[2], x(c.Scenario))
	block(cards.AfterChar)
	section(labels[3], x(persona))
	dialogues := c.Examples
	if dialogues == nil && c.MesExample != "" {
		// A card built in code rather than read has not been split.
		dialogues = cards.SplitExamples(c.MesExample)
	}
	section(labels[4], examples(dialogues, x, placed[cards.ExamplesTop], placed[cards.ExamplesBottom]))
	return b.String()
}

// examples renders the example dialogues (mes_example split at <START>,
// which is never sent) between the lore meant for their top and bottom, a
// blank line between each.
func examples(dialogues []string, x func(string) string, top, bottom []string) string {
	var parts []string
	if len(top) > 0 {
		parts = append(parts, strings.Join(top, "\n"))
	}
	for _, d := range dialogues {
		if d = x(d); d != "" {
			parts = append(parts, d)
		}
	}
	if len(bottom) > 0 {
		parts = append(parts, strings.Join(bottom, "\n"))
	}
	return strings.Join(parts, "\n\n")
}
